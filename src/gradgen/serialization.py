"""torch.save / torch.load in PyTorch's own checkpoint format, and tensor pickling.

The format (PyTorch's zip archive, written by torch.save since 1.6) is a zip file of
uncompressed records under one folder, `<name>/`:

- `data.pkl`: the object, pickled (protocol 2). A tensor is the call
  `torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
  OrderedDict())`, where `storage` is a *persistent id*, the tuple
  `('storage', torch.FloatStorage, key, location, numel)`; offset, size and stride
  count elements. A Parameter wraps that in `torch._utils._rebuild_parameter`.
- `data/<key>`: the raw bytes of one storage (tensors that share memory share a key).
- `byteorder` (`little`), `version` (`3`), `.format_version`, `.storage_alignment`:
  small text records. Storage records start on 64-byte boundaries, as torch writes them.

gradgen never imports torch: it writes those global names itself and reads them back
through an unpickler whose `find_class` answers from explicit tables. With
`weights_only=True` (the default, PyTorch's rule) only tensors, storages, dtypes,
containers (dict, OrderedDict, list, tuple, set) and primitive values can be loaded,
any other global is refused before it is imported, and BUILD (setting attributes) is
allowed only on an OrderedDict (a state dict's `_metadata`).

Pickling a tensor (`pickle.dumps`, multiprocessing) and `copy.deepcopy` go through
`reduce_tensor` / `deepcopy_tensor`, which `Tensor.__reduce_ex__`/`__deepcopy__` call.
As in PyTorch, views deep-copied together stay views of one new array, while a pickled
view carries only its own elements (a sample of a large dataset tensor sent to a
DataLoader worker does not send the whole dataset).
"""

from __future__ import annotations

import _compat_pickle
import builtins
import codecs
import copy
import io
import os
import pickle
import sys
import zipfile
from collections import OrderedDict
from typing import IO, Any

import numpy as np

from . import devices, dtypes
from .nn.parameter import Parameter
from .tensor import Size, Tensor

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "deepcopy_tensor",
    "get_safe_globals",
    "load",
    "reduce_tensor",
    "safe_globals",
    "save",
]

FileLike = str | os.PathLike[str] | IO[bytes]

# -- pickle and deepcopy of tensors (in memory) ---------------------------------------

DEEPCOPY_NON_LEAF = (
    "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
    "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
    "because of a torch.nn.utils.weight_norm usage, see "
    "https://github.com/pytorch/pytorch/pull/103001"
)


def _root_view(data: np.ndarray) -> tuple[np.ndarray, int] | None:
    """The contiguous array `data` is a view of, and data's byte offset in it (None if
    data's memory is not such an array's)."""
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    offset = data.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    if offset < 0 or offset > root.nbytes:
        return None
    return root, offset


def _view_arguments(data: np.ndarray) -> tuple[Any, ...]:
    """(root, byte offset, shape, byte strides, dtype) that rebuild `data` as a view."""
    found = _root_view(data)
    if found is None:  # not a view of one contiguous block: pickle a copy
        root = np.array(data, order="C")
        return root, 0, data.shape, root.strides, data.dtype
    root, offset = found
    return root, offset, data.shape, data.strides, data.dtype


def _view_of(root: np.ndarray, offset: int, shape: Any, strides: Any, kind: Any) -> Any:
    if root.size == 0 or 0 in tuple(shape):
        return np.empty(shape, dtype=kind)
    return np.ndarray(shape, dtype=kind, buffer=root, offset=offset, strides=strides)


def _rebuild_tensor(
    cls: type[Tensor], view: tuple[Any, ...], requires_grad: bool, state: Any
) -> Tensor:
    """A `cls` over the view `_view_arguments` described (pickle's rebuild call)."""
    tensor = Tensor.__new__(cls)
    Tensor.__init__(tensor, _view_of(*view), requires_grad=requires_grad)
    if state:
        tensor.__dict__.update(state)
    return tensor


def _pickled_view(data: np.ndarray) -> tuple[Any, ...]:
    """A view over its whole root (a transpose) keeps its strides; a view of part of a
    larger array pickles a copy of its own elements only (PyTorch's pickle does not
    share memory between the tensors of one pickle either)."""
    view = _view_arguments(data)
    if view[0].nbytes == data.nbytes:
        return view
    return _view_arguments(np.array(data, order="K"))


def reduce_tensor(tensor: Tensor) -> tuple[Any, ...]:
    """pickle's reduce value for a tensor: its data, its class and requires_grad. As
    PyTorch, `.grad`, hooks and history are not pickled (a non-leaf comes back as a
    leaf that requires grad)."""
    state = getattr(tensor, "__dict__", None) or None
    arguments = (_pickled_view(tensor._data), tensor.requires_grad, state)
    return _rebuild_tensor, (type(tensor), *arguments)


def deepcopy_tensor(tensor: Tensor, memo: dict[int, Any]) -> Tensor:
    """copy.deepcopy of a leaf: new memory (shared among the views copied together),
    requires_grad and, except for a Parameter (as PyTorch), `.grad` kept."""
    if not tensor.is_leaf:
        raise RuntimeError(DEEPCOPY_NON_LEAF)
    if id(tensor) in memo:
        return memo[id(tensor)]  # type: ignore[no-any-return]
    root, *rest = _view_arguments(tensor._data)
    view = (copy.deepcopy(root, memo), *rest)
    state = copy.deepcopy(getattr(tensor, "__dict__", None), memo) or None
    result = _rebuild_tensor(type(tensor), view, tensor.requires_grad, state)
    memo[id(tensor)] = result
    if tensor._grad is not None and not isinstance(tensor, Parameter):
        result._grad = copy.deepcopy(tensor._grad, memo)
    return result


def _reduce_ex(self: Tensor, protocol: Any) -> tuple[Any, ...]:
    return reduce_tensor(self)


def install(cls: type[Tensor]) -> None:
    """Give Tensor pickling and copy.deepcopy (this module sits above tensor.py, so it
    attaches them, as tensor_api attaches the methods that call operators)."""
    setattr(cls, "__reduce_ex__", _reduce_ex)
    setattr(cls, "__deepcopy__", deepcopy_tensor)


# -- the names torch's files use -------------------------------------------------------


class _StorageType:
    """A torch storage class (`torch.FloatStorage`) as a dtype marker."""

    def __init__(self, module: str, name: str, kind: str) -> None:
        self.module, self.name, self.dtype = module, name, np.dtype(kind)

    def __call__(self, *args: Any) -> Any:
        raise pickle.UnpicklingError(f"{self.module}.{self.name} cannot be called")


_STORAGE_TYPES = [
    _StorageType("torch", name, kind)
    for name, kind in [
        ("FloatStorage", "float32"),
        ("DoubleStorage", "float64"),
        ("HalfStorage", "float16"),
        ("LongStorage", "int64"),
        ("IntStorage", "int32"),
        ("ShortStorage", "int16"),
        ("CharStorage", "int8"),
        ("ByteStorage", "uint8"),
        ("BoolStorage", "bool"),
        ("ComplexFloatStorage", "complex64"),
        ("ComplexDoubleStorage", "complex128"),
    ]
    + ([("BFloat16Storage", "bfloat16")] if dtypes.HAS_BFLOAT16 else [])
] + [_StorageType("torch.storage", "UntypedStorage", "uint8")]
_STORAGE_FOR_DTYPE = {kind.dtype: kind for kind in _STORAGE_TYPES[:-1]}


class _Storage:
    """A loaded storage: a flat numpy array and where torch had it. `map_location`
    callables receive it as `storage` and may return it (`.cpu()` returns itself)."""

    def __init__(self, array: np.ndarray, location: str) -> None:
        self.array, self.location = array, location

    def cpu(self) -> _Storage:
        return self

    @property
    def device(self) -> devices.device:
        return devices.device("cpu")


class _TorchGlobal:
    """A global name of torch's written into data.pkl (a callable stand-in for pickle's
    checks; gradgen's loader maps the name back with `_TORCH_GLOBALS`)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __call__(self, *args: Any) -> Any:
        raise pickle.PicklingError(f"{self.module}.{self.name} is only a name")


_STORAGE_GLOBALS = {
    kind.dtype: _TorchGlobal(kind.module, kind.name) for kind in _STORAGE_TYPES[:-1]
}
_REBUILD_TENSOR_V2 = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_TORCH_DTYPES = {
    kind: _TorchGlobal("torch", str(kind).split(".")[-1])
    for kind in (
        dtypes.bool,
        dtypes.int32,
        dtypes.int64,
        dtypes.float32,
        dtypes.float64,
        dtypes.complex64,
        dtypes.complex128,
    )
}


def _tensor_from_storage(
    storage: Any,
    storage_offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any,
    backward_hooks: Any = None,
    metadata: Any = None,
) -> Tensor:
    """torch._utils._rebuild_tensor_v2: a tensor over a loaded storage (a view: tensors
    of one storage share memory, as in PyTorch)."""
    if not isinstance(storage, _Storage):
        raise pickle.UnpicklingError(
            f"_rebuild_tensor_v2 expects a storage, got {type(storage).__name__}"
        )
    array = storage.array
    itemsize = array.itemsize
    shape = tuple(builtins.int(extent) for extent in size)
    strides = tuple(builtins.int(step) * itemsize for step in stride)
    data = _view_of(
        array, builtins.int(storage_offset) * itemsize, shape, strides, array.dtype
    )
    tensor = Tensor(data)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def _parameter_from_tensor(
    data: Tensor, requires_grad: Any, backward_hooks: Any = None, state: Any = None
) -> Parameter:
    """torch._utils._rebuild_parameter (and _with_state, whose state gradgen's
    Parameter has no room for)."""
    return Parameter(data, requires_grad=builtins.bool(requires_grad))


def _latin1_encode(text: Any, encoding: Any = "latin1") -> bytes:
    """`_codecs.encode`, as protocol 2 pickles bytes; only its latin-1 use."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise pickle.UnpicklingError("_codecs.encode is allowed only for latin1 text")
    return codecs.encode(text, "latin1")


# torch's dtype names (torch.float16 ...), those gradgen has resolve to its dtypes.
_TORCH_DTYPE_NAMES = (
    "bool uint8 int8 int16 int32 int64 float16 bfloat16 float32 float64 complex32 "
    "complex64 complex128 half float double long int short cfloat cdouble"
).split()
# Every global a weights-only load may resolve, as (module, name) -> object.
_TORCH_GLOBALS: dict[tuple[str, str], Any] = {
    ("torch._utils", "_rebuild_tensor_v2"): _tensor_from_storage,
    ("torch._utils", "_rebuild_parameter"): _parameter_from_tensor,
    ("torch._utils", "_rebuild_parameter_with_state"): _parameter_from_tensor,
    ("torch", "Size"): Size,
    ("torch", "device"): devices.device,
    **{(kind.module, kind.name): kind for kind in _STORAGE_TYPES},
    **{
        ("torch", name): getattr(dtypes, name)
        for name in _TORCH_DTYPE_NAMES
        if isinstance(getattr(dtypes, name, None), dtypes.dtype)
    },
}
_SAFE_GLOBALS: dict[tuple[str, str], Any] = {
    ("collections", "OrderedDict"): OrderedDict,
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("_codecs", "encode"): _latin1_encode,
}


# Globals the user allowed (add_safe_globals): (module, name) -> object.
_user_safe_globals: dict[tuple[str, str], Any] = {}


def _global_name(entry: Any) -> tuple[tuple[str, str], Any]:
    if isinstance(entry, tuple):  # (object, "module.name" as the file spells it)
        found, name = entry
    else:
        found, name = entry, f"{entry.__module__}.{entry.__qualname__}"
    module, _, attribute = name.rpartition(".")
    return (module, attribute), found


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow these classes and functions in weights-only loads (PyTorch's API): only
    for objects you trust, since loading calls them. An entry may be a pair
    `(object, "module.name")` for a name the file spells differently."""
    _user_safe_globals.update(_global_name(entry) for entry in safe_globals)


def get_safe_globals() -> list[Any]:
    """The objects `add_safe_globals` allowed."""
    return list(_user_safe_globals.values())


def clear_safe_globals() -> None:
    """Forget every object `add_safe_globals` allowed."""
    _user_safe_globals.clear()


class safe_globals:  # noqa: N801  (PyTorch's name)
    """`with safe_globals([...]):` allows those objects inside the block only."""

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals
        self.saved: dict[tuple[str, str], Any] = {}

    def __enter__(self) -> None:
        self.saved = dict(_user_safe_globals)
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc_info: Any) -> None:
        _user_safe_globals.clear()
        _user_safe_globals.update(self.saved)


# -- save ------------------------------------------------------------------------------


def _storage_of(data: np.ndarray) -> tuple[np.ndarray, int, tuple[int, ...]]:
    """(storage array, offset, strides) in elements, as torch's file records them: a
    view of the tensor's root array when torch can express it, else a copy."""
    found = _root_view(data)
    itemsize = data.itemsize
    if found is not None:
        root, offset = found
        if (
            root.dtype == data.dtype
            and data.dtype.isnative
            and offset % itemsize == 0
            and all(step >= 0 and step % itemsize == 0 for step in data.strides)
        ):
            steps = tuple(step // itemsize for step in data.strides)
            return root, offset // itemsize, steps
    copied = np.ascontiguousarray(data, dtype=data.dtype.newbyteorder("="))
    return copied, 0, tuple(step // itemsize for step in copied.strides)


class _Pickler(pickle._Pickler):
    """Pickles with torch's global names for tensors, parameters and dtypes, and each
    storage as a persistent id whose bytes go to their own record."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.records: dict[str, bytes] = {}
        self._keys: dict[int, tuple[Any, ...]] = {}
        self._alive: list[np.ndarray] = []  # roots, so that their ids stay theirs

    def _save_torch_global(self, obj: _TorchGlobal) -> None:
        pickler: Any = self  # write and memoize: pickle._Pickler's, not in typeshed
        pickler.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        pickler.memoize(obj)

    dispatch[_TorchGlobal] = _save_torch_global  # type: ignore[assignment]

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _StorageReference):
            return self._persistent_storage(obj.array)
        return None

    def _persistent_storage(self, array: np.ndarray) -> tuple[Any, ...]:
        if id(array) not in self._keys:
            kind = _STORAGE_FOR_DTYPE.get(array.dtype.newbyteorder("="))
            if kind is None:
                raise pickle.PicklingError(
                    f"gradgen.save: no PyTorch storage type for dtype {array.dtype}"
                )
            key = str(len(self._keys))
            self.records[f"data/{key}"] = array.tobytes(order="A")
            torch_type = _STORAGE_GLOBALS[kind.dtype]
            self._keys[id(array)] = ("storage", torch_type, key, "cpu", array.size)
            self._alive.append(array)
        return self._keys[id(array)]

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Parameter):
            plain = Tensor(obj._data)
            return _REBUILD_PARAMETER, (plain, obj.requires_grad, OrderedDict())
        if isinstance(obj, Tensor):
            storage, offset, steps = _storage_of(obj._data)
            arguments = (_StorageReference(storage), offset, obj._data.shape, steps)
            return _REBUILD_TENSOR_V2, (*arguments, obj.requires_grad, OrderedDict())
        return NotImplemented


class _StorageReference:
    """A storage inside data.pkl: pickled as its persistent id only."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array


def _save_dtype(pickler: _Pickler, obj: Any) -> None:
    pickler._save_torch_global(_TORCH_DTYPES[obj])


def _aligned_info(
    archive: zipfile.ZipFile, name: str, alignment: int
) -> zipfile.ZipInfo:
    """A stored record whose data starts on an `alignment`-byte boundary (padding in
    the local header's extra field, as torch's writer does)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    assert archive.fp is not None
    start = archive.fp.tell() + 30 + len(name.encode("utf-8")) + 4
    padding = -start % alignment
    info.extra = b"FB" + padding.to_bytes(2, "little") + b"Z" * padding
    return info


def _write_archive(records: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, payload in records:
            archive.writestr(_aligned_info(archive, f"archive/{name}", 64), payload)
    return buffer.getvalue()


def save(
    obj: Any,
    f: FileLike,
    pickle_module: Any = None,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """Save `obj` to `f` (a path or a writable binary file) in PyTorch's checkpoint
    format: `torch.load` reads what this writes, and `load` what torch.save wrote."""
    if not _use_new_zipfile_serialization:
        raise RuntimeError(
            "gradgen.save writes only PyTorch's zip format "
            "(_use_new_zipfile_serialization=True)"
        )
    data = io.BytesIO()
    pickler = _Pickler(data, pickle_protocol)
    pickler.dump(obj)
    records = [("data.pkl", data.getvalue()), (".format_version", b"1")]
    records.append((".storage_alignment", b"64"))
    if not _disable_byteorder_record:
        records.append(("byteorder", sys.byteorder.encode("ascii")))
    records += sorted(pickler.records.items(), key=lambda item: int(item[0][5:]))
    records.append(("version", b"3\n"))
    payload = _write_archive(records)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as file:
            file.write(payload)
    else:
        f.write(payload)


# -- load ------------------------------------------------------------------------------

WEIGHTS_ONLY_FAILED = (
    "Weights only load failed. gradgen.load(weights_only=True), the default, loads only "
    "tensors, containers and primitive values. Re-run it with weights_only=False only "
    "if you trust the source of the file: that can run arbitrary code.\n"
    "WeightsUnpickler error: Unsupported global: GLOBAL {} was not an allowed global "
    "by default."
)
CUDA_LOCATION = (
    "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is "
    "False. If you are running on a CPU-only machine, please use torch.load with "
    "map_location=torch.device('cpu') to map your storages to the CPU."
)


def _map_location(storage: _Storage, map_location: Any) -> _Storage:
    """The storage where map_location puts it: gradgen has the CPU only."""
    location = storage.location
    if callable(map_location):
        mapped = map_location(storage, location)
        if isinstance(mapped, _Storage):
            return mapped
        if mapped is not None:
            raise TypeError(
                "gradgen.load: map_location must return the storage it was given or "
                f"None, got {type(mapped).__name__}"
            )
    elif isinstance(map_location, dict):
        location = str(map_location.get(location, location))
    elif map_location is not None:
        location = str(map_location)
    if location.startswith("cuda"):
        raise RuntimeError(CUDA_LOCATION)
    return storage


class _LoaderMixin:
    """find_class and persistent_load, shared by the two unpicklers."""

    weights_only: bool
    archive: zipfile.ZipFile
    prefix: str
    map_location: Any
    swap_bytes: bool
    storages: dict[str, _Storage]

    def find_class(self, module: str, name: str) -> Any:
        # Protocol 2 spells Python 2's names (__builtin__.set): as pickle's fix_imports.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        module = _compat_pickle.IMPORT_MAPPING.get(module, module)
        key = (module, name)
        found = _TORCH_GLOBALS.get(key, _SAFE_GLOBALS.get(key))
        if found is None:
            found = _user_safe_globals.get(key)
        if found is not None:
            return found
        if module == "torch" and name in _TORCH_DTYPE_NAMES:
            raise pickle.UnpicklingError(
                f"gradgen.load: the file holds the dtype torch.{name}, which gradgen "
                "does not have"
            )
        if module == "torch" and name.endswith("Storage"):
            raise pickle.UnpicklingError(
                f"gradgen.load: the file holds a torch.{name}, tensors of a dtype "
                "gradgen does not have"
            )
        if self.weights_only:
            raise pickle.UnpicklingError(WEIGHTS_ONLY_FAILED.format(f"{module}.{name}"))
        if module == "torch" or module.startswith("torch."):
            raise pickle.UnpicklingError(
                f"gradgen.load cannot rebuild PyTorch's {module}.{name}: save the "
                "object's state_dict() with torch.save and load that instead"
            )
        return super().find_class(module, name)  # type: ignore[misc]

    def persistent_load(self, pid: Any) -> Any:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(
                f"unknown persistent id in checkpoint: {pid!r}"
            )
        _, kind, key, location, numel = pid
        if not isinstance(kind, _StorageType):
            raise pickle.UnpicklingError(f"{kind!r} is not a storage type")
        if not _has_dtype(kind.dtype):
            raise pickle.UnpicklingError(
                f"gradgen.load: the file holds a {kind.module}.{kind.name}, tensors "
                "of a dtype gradgen does not have"
            )
        key = str(key)
        if key not in self.storages:
            raw = self.archive.read(f"{self.prefix}data/{key}")
            array = np.frombuffer(bytearray(raw), dtype=kind.dtype)
            if array.size != numel:
                raise pickle.UnpicklingError(
                    f"storage {key} holds {array.size} elements, the file says {numel}"
                )
            if self.swap_bytes:
                array = array.byteswap()
            storage = _Storage(array, str(location))
            self.storages[key] = _map_location(storage, self.map_location)
        return self.storages[key]


def _has_dtype(kind: np.dtype) -> bool:
    try:
        dtypes.from_numpy(kind)
    except (KeyError, TypeError, ValueError):
        return False
    return True


def _restricted_build(unpickler: Any) -> None:
    """BUILD in a weights-only load: only an OrderedDict's attributes (a state dict's
    `_metadata`) or an instance of a class the user allowed may be set."""
    state = unpickler.stack[-1]
    inst = unpickler.stack[-2]
    allowed = type(inst) is OrderedDict and isinstance(state, dict)
    if not allowed and type(inst) in _user_safe_globals.values():
        pickle._Unpickler.load_build(unpickler)  # type: ignore[attr-defined]
        return
    if not allowed:
        raise pickle.UnpicklingError(
            WEIGHTS_ONLY_FAILED.split("\n")[0]
            + f"\nWeightsUnpickler error: setting the state of a {type(inst).__name__} "
            "is not allowed"
        )
    unpickler.stack.pop()
    inst.__dict__.update(state)


class _WeightsUnpickler(_LoaderMixin, pickle._Unpickler):
    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = _restricted_build


class _FullUnpickler(_LoaderMixin, pickle.Unpickler):
    pass


def _open_archive(f: FileLike) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(f)
    except zipfile.BadZipFile:
        raise RuntimeError(
            "gradgen.load reads PyTorch's zip checkpoint format (torch.save since "
            "PyTorch 1.6); this file is not a zip archive (an older torch format, or "
            "not a checkpoint)"
        ) from None


def _data_record(archive: zipfile.ZipFile) -> str:
    for name in archive.namelist():
        if name.endswith("data.pkl") and name.count("/") == 1:
            return name
    raise RuntimeError("gradgen.load: the archive has no <name>/data.pkl record")


def load(
    f: FileLike,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load an object saved by `save` or by torch.save. `weights_only` (None means
    True, PyTorch's default) refuses any global but tensors, containers and primitive
    values; `map_location` may be a device, a string, a dict or a callable
    `(storage, location)`."""
    with _open_archive(f) as archive:
        data_name = _data_record(archive)
        prefix = data_name[: -len("data.pkl")]
        names = set(archive.namelist())
        order: str = sys.byteorder
        if f"{prefix}byteorder" in names:
            order = archive.read(f"{prefix}byteorder").decode("ascii").strip()
        full = weights_only is False
        unpickler_class = _FullUnpickler if full else _WeightsUnpickler
        file = io.BytesIO(archive.read(data_name))
        encoding = pickle_load_args.get("encoding", "utf-8")
        unpickler: Any = unpickler_class(file, encoding=encoding)
        unpickler.weights_only = not full
        unpickler.archive, unpickler.prefix = archive, prefix
        unpickler.map_location = map_location
        unpickler.swap_bytes = order != sys.byteorder
        unpickler.storages = {}
        return unpickler.load()


_Pickler.dispatch[dtypes.dtype] = _save_dtype  # type: ignore[assignment]
