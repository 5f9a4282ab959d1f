"""Schemas shared by tests/test_schema_parse.py and tests/test_schema_refusals.py: the
seeds of the property-based tests and the round-trip examples."""

from __future__ import annotations

SEEDS = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
]

# Schemas of torch 2.13's native_functions.yaml unless marked "synthetic" (written to
# reach a type or form the file does not use).
ROUND_TRIP = SEEDS + [
    # out, in-place and dunder variants
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
    "Tensor(a!)",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "__and__.Scalar(Tensor self, Scalar other) -> Tensor",
    "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "__ilshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    "_foreach_zero_(Tensor(a!)[] self) -> ()",
    "split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, "
    "Tensor(a!)[] out) -> ()",
    "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
    "bool accumulate=False) -> Tensor(a!)",
    # named and multiple returns
    "max.dim(Tensor self, int dim, bool keepdim=False) -> "
    "(Tensor values, Tensor indices)",
    "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
    "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    "_cummax_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) "
    "-> ()",
    "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> "
    "(Tensor min, Tensor max)",
    # views and alias forms
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> "
    "Tensor(a)",
    "foo(Tensor(a|b) self) -> Tensor(a|b)",  # synthetic
    "foo(Tensor self, Tensor(a!)? buffer) -> ()",  # synthetic
    # list, optional and sized types
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
    "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
    "upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, "
    "float[]? scale_factors) -> Tensor",
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
    "SymInt[] padding, SymInt[] dilation, bool transposed, "
    "SymInt[] output_padding, SymInt groups) -> Tensor",
    "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False) -> Tensor",
    "foo(DimVector shape, DeviceIndex index, Device? device, Layout layout, "
    "GraphModule module, bool[3] mask, SymInt[6] pad, float?[] values) -> ()",
    # synthetic
    "set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)",
    "record_stream(Tensor(a!) self, Stream s) -> ()",
    # tensor options and self not first
    "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
    "MemoryFormat? memory_format=None) -> Tensor",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    # every default form
    "normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> "
    "Tensor",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
    "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
    "linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], "
    "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, "
    'SymInt[1] stride=1, str padding="valid", SymInt[1] dilation=1, '
    "SymInt groups=1) -> Tensor",
    "_test_string_default(Tensor dummy, str a=\"\\\"'\\\\\", str b='\"\\'\\\\') -> "
    "Tensor",
    "randint(SymInt high, SymInt[] size, *, ScalarType? dtype=long, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    'foo(int[] dims=[0,1], str empty="", float tiny=1e-08, int low=-100, '
    "float half=0.5) -> Tensor",  # synthetic
    # non-Tensor returns
    "is_nonzero(Tensor self) -> bool",
    "sym_size.int(Tensor self, int dim) -> SymInt",
    "result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType",
    "qscheme(Tensor self) -> QScheme",
    "_local_scalar_dense(Tensor self) -> Scalar",
    "foo(Tensor self) -> (SymBool a, float b, int c, Tensor[] d)",  # synthetic
    # custom classes, namespaces, functional overloads, scratch outs (synthetic)
    "foo(__torch__.torch.classes.quantized.Conv2dPackedParamsBase packed, "
    "Tensor x) -> Tensor",
    "bar(__torch__.torch.classes.my_ns.Thing? thing) -> "
    "__torch__.torch.classes.my_ns.Thing",
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "native_batch_norm_functional(Tensor input, Tensor running_mean) -> "
    "(Tensor, Tensor)",
    "foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_buffer) -> "
    "Tensor(a!)",
]
