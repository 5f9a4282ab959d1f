"""The frozen views the templates read (one dataclass per thing a template prints:
an operator, its autograd kernel, its forward AD, a Backward node, a binding), and
the small questions about schemas that the builders in ir_*.py share.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import NativeFunction
from .schema import Argument, BaseTy, SchemaKind
from .ir_kernel_sources import KernelSourceIR

# -- the operator's kernels ------------------------------------------------------------


@dataclass(frozen=True)
class SaveStatement:
    """One line of the wrapper's save block, optionally guarded."""

    target: str  # e.g. "grad_fn.self_"
    value: str  # e.g. "SavedVariable(self, False)"
    guard: str | None  # e.g. "grad_fn._fn1 is not None"
    # For an input saved plain: SavedVariable.input's common case inline (the tensor
    # itself when it has no version counter and no saved-tensor hooks are open), as
    # the fast paths store it; None for every other save.
    fast_value: str | None = None


@dataclass(frozen=True)
class AutogradIR:
    """What the VariableType wrapper of a differentiable operator does."""

    node_class: str  # the annotation of grad_fn
    node_constructor: str  # e.g. "functions.AddBackward0()"
    differentiable_inputs: str  # "self, other" ("*tensors" for a Tensor[] input)
    input_saves: tuple[SaveStatement, ...]
    output_histories: tuple[str, ...]  # expressions of the outputs that get history
    output_saves: tuple[SaveStatement, ...]
    list_output: bool = False  # one Tensor[] output: every element gets history
    # set_history, or for a NotImplemented node the variant that leaves integral and
    # bool outputs alone (they never require grad).
    history_function: str = "set_history"
    # What collects the edges (None: nothing records): next_edges_1 / next_edges_2 for
    # one or two Tensor inputs, next_edges for any other count or a Tensor[] input.
    edges_function: str = "next_edges"
    # Every differentiable input is a plain Tensor (not `Tensor?`, which may be None):
    # the fast path collects their edges inline.
    plain_inputs: bool = False
    # What the node class's own `__init__` sets beyond Node's, (attribute, value), for
    # the fast path that builds the node without its `__init__` frames; None when the
    # node is not a generated Backward class (NotImplementedBackward: its constructor).
    node_fields: tuple[tuple[str, bool | None], ...] | None = None


@dataclass(frozen=True)
class ForwardIR:
    """One generated JVP function (from a `result:` formula) and how the wrapper calls it."""

    function_name: str  # e.g. "add_Tensor_jvp", in functions.py
    formula: str  # as written in derivatives.yaml (text for the docstring filter)
    parameters: str  # "self_p: Tensor, self_t: Tensor, ..., result: Tensor"
    expression: str
    call_arguments: str  # in the wrapper: "self, tangent_or_zeros(self), ..., result"
    output: str  # the output it sets the tangent of: "result", "result[1]", "self"
    list_output: bool  # the output is a Tensor[]: one tangent per element


@dataclass(frozen=True)
class ForwardADIR:
    """What an operator's wrapper does when an input has a tangent."""

    condition: str  # "self._fw_grad is not None or other._fw_grad is not None"
    jvps: tuple[ForwardIR, ...]  # empty: forward AD is not implemented for it
    keeps_original_self: bool  # in-place and a formula reads self_p


# The operators of Python's `+`, `-` and `*` on two tensors or a tensor and a number,
# and of `**` with a number exponent (tensor_api.DUNDERS): each gets a dunder_NAME
# beside its fast path.
DUNDER_OPERATORS = ("add.Tensor", "sub.Tensor", "mul.Tensor", "pow.Tensor_Scalar")


@dataclass(frozen=True)
class OperatorIR:
    name: str  # "add.Tensor"
    identifier: str  # "add_Tensor"
    schema: str
    parameters: str  # "self: Tensor, other: Tensor, alpha: Number"
    arguments: str  # "self, other, alpha"
    is_view: bool
    is_inplace: bool  # writes into `self` and returns it (`add_`)
    returns_list: bool  # one Tensor[] output (split, unbind, ...)
    # backend kernel
    promoted: str  # "self, other" ("" when the expression decides the dtype)
    # The two promoted arguments when both are plain Tensors: the kernel then takes
    # their common dtype inline when they share one ("" otherwise).
    promoted_pair: tuple[str, ...]
    # A kernel helper checking the pair's arrays where their dtypes differ ("": none).
    promotion_check: str
    integer_to_float: bool  # an integral common dtype becomes the default float dtype
    tensor_unwraps: tuple[str, ...]  # lines turning Tensor arguments into arrays
    kernel_body: tuple[str, ...]  # lines computing and returning the result
    # The fast path's inline kernel: the `numpy:` expression of a binary elementwise
    # kernel over `array_0`, `array_1` (the promoted pair's arrays), "" for none.
    inline_kernel: str
    # The numpy dtype kinds the inline kernel is limited to ("": any), when it stands
    # for a helper that checks the other kinds (`subtract` refuses bool tensors).
    inline_kinds: str
    # (tensor, scalar) when the inline kernel is over one tensor (`array_0`) and a
    # Python number (`self ** exponent`), () when it is over two tensors or none.
    inline_scalar: tuple[str, ...]
    # autograd
    autograd: AutogradIR | None
    forward_ad: ForwardADIR | None
    no_requires_grad_checks: tuple[str, ...]  # argument names
    # vmap's rule, from `batching:` (codegen/batching.py): (kind, names) or None
    batching: tuple[str, tuple[str, ...]] | None = None
    # For an operator over a tensor and a Scalar (`inline_scalar`), the identifier of
    # its overload with a plain Tensor in the Scalar's place, when that one has a fast
    # path too (pow.Tensor_Scalar: "pow_Tensor_Tensor"), else "".
    tensor_overload: str = ""
    # One of the operators Python's binary operators call (`DUNDER_OPERATORS`, or the
    # names probe's stand-ins: codegen/names.py), set by ir.build.
    dunder: bool = False

    @property
    def fast_path(self) -> bool:
        """Whether variable_type.py gives the operator a fused common case
        (`fast_<identifier>`, called by its bindings through `OperatorHandle.fast`): a
        recording operator that neither writes into an input nor returns a view or a
        Tensor[] (those need the ADInplaceOrView layer), whose differentiable inputs are
        one or two plain Tensors."""
        return (
            self.autograd is not None
            and not self.is_inplace
            and not self.is_view
            and not self.returns_list
            and not self.autograd.list_output
            and self.autograd.edges_function in ("next_edges_1", "next_edges_2")
            and self.autograd.plain_inputs
        )

    @property
    def dunder_fast_path(self) -> bool:
        """Whether variable_type.py also gives the operator `dunder_<identifier>(self,
        other)`, what Python's binary operator on a Tensor calls (`x * y`,
        Tensor.__mul__ and __rmul__): the method binding's conversion of `other` and the
        fast path in one frame (over a Scalar, `x ** 3`: a Python int or float goes
        straight in, a tensor to `tensor_overload`, anything else to the method). The
        dunder over two tensors names them as add.Tensor's schema does."""
        return (
            self.fast_path
            and self.dunder
            and (
                bool(self.inline_scalar)
                or bool(self.promoted_pair)
                and self.arguments in ("self, other", "self, other, alpha")
            )
        )

    @property
    def inplace_fast_path(self) -> bool:
        """Whether variable_type.py gives the in-place operator a no-grad common case
        (`fast_<identifier>`: the kernel below ADInplaceOrView and the version bump, as
        the dispatcher does when grad mode is off, in one frame), e.g. an optimizer's
        `p -= lr * p.grad` under no_grad."""
        return self.is_inplace and not self.is_view and not self.returns_list


# -- the public bindings ----------------------------------------------------------------


@dataclass(frozen=True)
class BindingIR:
    """A public function or Tensor method."""

    python_name: str
    signature: str  # "input: Tensor, other: Tensor | Number, *, alpha: Number = 1"
    conversions: tuple[str, ...]  # lines run before the call
    call: str  # "operators.add_Tensor.call(input, other, alpha)"
    schema: str
    target: str  # what the call calls: "operators.add_Tensor.call"
    overload_text: str  # the signature as errors show it: "Tensor input, Scalar other"
    overload_params: tuple[str, ...]  # Param(...) constructors, in schema order
    arguments: str = ""  # what `call` passes: "input, other, alpha"
    out_overload: str | None = None  # PyTorch's out= overload: the function takes out=
    # What an overload's Signature calls: the target, or tuple_result(target) for an
    # operator returning Tensor[] (a Python binding returns a tuple, as PyTorch's).
    signature_target: str = ""
    # After a failed call, `check_arguments(name, checks, (checked))` raises PyTorch's
    # error for an argument of the wrong type: "(('dim', 'int', 2),)" and "dim, ".
    checks: str = ""
    checked: str = ""


@dataclass(frozen=True)
class OverloadedIR:
    """A public name with several overloads, resolved at call time by argument types."""

    python_name: str
    overloads: tuple[BindingIR, ...]

    @property
    def doc(self) -> str:
        """The method's docstring text: its schemas."""
        return " or ".join(f"``{overload.schema}``" for overload in self.overloads)

    @property
    def accepts_out(self) -> bool:
        """Whether one of the overloads takes out= (the name is an `OutOverloads`)."""
        return any(overload.out_overload for overload in self.overloads)


@dataclass(frozen=True)
class NamespaceIR:
    """A generated module of public functions: ops.py (gradgen.NAME) or one of
    `python_module:` (linalg.py for gradgen.linalg.NAME)."""

    module: str  # "ops", "linalg", ...
    functions: tuple[BindingIR, ...]
    overloaded: tuple[OverloadedIR, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return (
            *(f.python_name for f in self.functions),
            *(o.python_name for o in self.overloaded),
        )


# -- Backward nodes ---------------------------------------------------------------------


@dataclass(frozen=True)
class FormulaIR:
    """One formula block of a node's functional apply."""

    indices: tuple[int, ...]  # edge indices of the formula's inputs
    var_names: str  # "self" or "self, other", text for the comment filter
    expression: str
    wrap_any_grad_defined: bool
    # A one-input formula that reads grad_input_mask gets it defined, (needs_input_grad[i],)
    # (a formula of several inputs always has it).
    uses_grad_input_mask: bool = False
    # The array form's: each result of a multi-input formula becomes a Tensor.
    wrap_results: bool = False


@dataclass(frozen=True)
class ArrayFormIR:
    """A node's array form (array_formulas.py): its method apply_arrays, which the
    engine calls with arrays and apply calls after unpacking the saved tensors once."""

    unpacked: tuple[tuple[str, str], ...]  # (apply's local, unpack expression)
    unpacked_tuple: str  # the locals as a tuple display, "(saved_self,)"
    # apply's arguments of the tensor form: (parameter, expression), the saved
    # tensors as unpacked once.
    tensor_arguments: tuple[tuple[str, str], ...]
    # What apply passes apply_arrays: the saved tensors' arrays as a tuple display,
    # "(array_of(saved_self),)" ("" when nothing is saved).
    saved_arguments: str
    # apply_arrays: (local, slot) per saved tensor (read through saved_array), and
    # what it takes for needs_input_grad.
    saved_arrays: tuple[tuple[str, str], ...]  # (local, the node's slot)
    needs_input_grad: str
    formulas: tuple[FormulaIR, ...]  # over arrays, with apply_arrays' names


@dataclass(frozen=True)
class BackwardIR:
    class_name: str
    function_name: str  # the functional apply, e.g. "sub_backward0_apply"
    schema: str
    # The docstring's lines (text for the docstring filter): the schema, then each
    # formula as written in the YAML, "self: handle_r_to_c(...)".
    doc_lines: tuple[str, ...]
    slots: tuple[str, ...]
    saved_variable_slots: tuple[str, ...]
    getters: tuple[tuple[str, str, str], ...]  # (property name, expression, type)
    num_inputs: int
    apply_arguments: tuple[tuple[str, str], ...]  # (parameter, expression in apply)
    parameters: str  # of the functional apply
    uses_grad: bool
    uses_retain_variables: bool  # a formula reads `retain_variables`
    input_sizes: tuple[str, ...]  # edges per input: "1", or "self.tensors_size_"
    formulas: tuple[FormulaIR, ...] = field(default_factory=tuple)
    array_form: ArrayFormIR | None = None

    @property
    def has_list_inputs(self) -> bool:
        return any(size != "1" for size in self.input_sizes)


@dataclass(frozen=True)
class ReturnTypeIR:
    """A named tuple for an operator whose returns are named."""

    name: str  # the Python class, e.g. "max_dim_return"
    display: str  # its __name__ as PyTorch prints it, e.g. "max"
    fields: tuple[str, ...]


@dataclass(frozen=True)
class PackageIR:
    operators: tuple[OperatorIR, ...]
    backward_nodes: tuple[BackwardIR, ...]
    functions: tuple[BindingIR, ...]
    methods: tuple[BindingIR, ...]
    overloaded_functions: tuple[OverloadedIR, ...]
    overloaded_methods: tuple[OverloadedIR, ...]
    return_types: tuple[ReturnTypeIR, ...]
    kernel_helpers: tuple[str, ...]
    formula_helpers: tuple[str, ...]
    formula_functions: tuple[str, ...]
    # The python_module: namespaces (linalg.py, ...), each also in formula_imports.
    namespaces: tuple[NamespaceIR, ...]
    # What formulas call from the namespaces: (module, public name, operator name), so
    # functions.py has `from .linalg import solve as linalg_solve`.
    formula_imports: tuple[tuple[str, str, str], ...]
    # The user's kernels module, imported by name in kernels.py and functions.py.
    user_module: str | None = None
    # The kernels as data for gradgen.compile (kernel_sources.py).
    kernel_sources: tuple[KernelSourceIR, ...] = ()
    # Whether any node has an array form (functions.py then imports the twins).
    array_forms: bool = False

    @property
    def jvps(self) -> tuple[ForwardIR, ...]:
        seen: dict[str, ForwardIR] = {}
        for operator in self.operators:
            if operator.forward_ad is not None:
                for jvp in operator.forward_ad.jvps:
                    seen.setdefault(jvp.function_name, jvp)
        return tuple(seen.values())


# -- questions about schemas that the builders share -----------------------------------


def _is_int_list(argument: Argument) -> bool:
    listed = argument.type.is_list_like()
    return listed is not None and (
        listed.elem.is_base_ty_like(BaseTy.int)
        or listed.elem.is_base_ty_like(BaseTy.SymInt)
    )


def _is_inplace(function: NativeFunction) -> bool:
    return function.schema.kind() is SchemaKind.inplace


def return_type_name(function: NativeFunction) -> str:
    """The named tuple of an operator with named returns, e.g. `max_dim_return`."""
    return f"{function.identifier}_return"


def _is_optional(function: NativeFunction, name: str) -> bool:
    argument = function.argument(name)
    return argument is not None and argument.type.is_nullable()


def _is_tensor_list(function: NativeFunction, name: str) -> bool:
    argument = function.argument(name)
    return argument is not None and argument.type.is_list_like() is not None


def _returns_list(function: NativeFunction) -> bool:
    returns = function.schema.returns
    return len(returns) == 1 and returns[0].type.is_list_like() is not None


def edge_function(index: int, node: str) -> str:
    """The expression for the node edge `index` leads to, read off the flat edges a
    Node keeps (graph.Node: `_fn0`, `_fn1`, then the tuple `_more`)."""
    if index < 2:
        return f"{node}._fn{index}"
    return f"{node}._more[{index - 2}][0]"
