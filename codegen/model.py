"""The generator's model of the two YAML files, after validation.

`NativeFunction` is one native_functions.yaml entry; `DifferentiabilityInfo` is one
derivatives.yaml entry joined to its NativeFunction, with every formula analysed and
the list of what its Backward node saves; `Model` is both files, what the generator
renders from. All are frozen; derived facts are properties. load.py builds them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .batching import Batching
from .errors import Location
from .formulas import AnalysedFormula, SavedAttribute, SavedKind
from .forward_formulas import AnalysedForward
from .kernels_module import KernelsModule
from .schema import Argument, FunctionSchema

# The name an in-place kernel expression uses for the array it writes into (self's).
INPLACE_OUT = "out"

# `python_module:` values. PyTorch binds an operator of the namespaces as
# torch.<module>.<name without the `<module>_` prefix> (linalg_solve -> torch.linalg.solve);
# `nn` (torch._C._nn) binds as gradgen.NAME here, like an entry without the key.
NAMESPACES = ("linalg", "special", "fft")
PYTHON_MODULES = ("nn", *NAMESPACES)


class Variant(enum.Enum):
    function = "function"
    method = "method"


class ForwardKind(enum.Enum):
    formula = "formula"
    auto_element_wise = "auto_element_wise"
    auto_linear = "auto_linear"


@dataclass(frozen=True)
class NativeFunction:
    """An operator: its schema and how it is computed."""

    schema: FunctionSchema
    variants: frozenset[Variant]
    numpy: str | None  # the kernel expression, checked
    composite: str | None  # a function of gradgen.composites
    type_promotion: tuple[str, ...]
    location: Location
    # TensorIterator's promote_integer_inputs_to_float: an integral common dtype becomes
    # the default float dtype (true division, atan2, ...).
    integer_to_float: bool = False
    python_module: str | None = None  # one of PYTHON_MODULES

    @property
    def namespace(self) -> str | None:
        """The module the public function lives in (`linalg` for gradgen.linalg.NAME),
        None for gradgen.NAME."""
        return self.python_module if self.python_module in NAMESPACES else None

    @property
    def public_name(self) -> str:
        """The public function's name in its module: `solve` for `linalg_solve` in
        gradgen.linalg; else `python_name`. Formulas call the operator by
        `python_name`, as PyTorch's call at::linalg_solve."""
        if self.namespace is None:
            return self.python_name
        return self.python_name.removeprefix(self.namespace + "_")

    # PyTorch's out= overload of this function (`add.out`): gradgen.NAME takes `out=`.
    out_overload: str | None = None
    # How vmap batches it (the `batching:` key, codegen/batching.py); None: the loop.
    batching: Batching | None = None
    # A kernel helper called with the promoted pair's arrays before their promotion
    # when their dtypes differ (sub's refusal of a bool operand): "" for none.
    promotion_check: str = ""

    @property
    def name(self) -> str:
        """The operator name with overload, e.g. ``add.Tensor``."""
        return str(self.schema.name)

    @property
    def python_name(self) -> str:
        """The public function/method name, e.g. ``add`` (``add_`` for in-place)."""
        base = self.schema.name.name
        return base.base + ("_" if base.inplace else "")

    @property
    def identifier(self) -> str:
        """A Python identifier unique per operator, e.g. ``add_Tensor``."""
        return self.schema.name.unambiguous_name

    @property
    def arguments(self) -> tuple[Argument, ...]:
        return tuple(self.schema.arguments.flat_all)

    def argument(self, name: str) -> Argument | None:
        return next((a for a in self.arguments if a.name == name), None)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(self.schema.return_names())


@dataclass(frozen=True)
class Derivative:
    """A backward formula for one or more inputs (``self, other: f(...)``)."""

    var_names: tuple[str, ...]
    original: str  # as written in derivatives.yaml
    formula: AnalysedFormula
    location: Location


@dataclass(frozen=True)
class ForwardDerivative:
    """A forward-mode formula for one or more outputs (validated; generated later)."""

    var_names: tuple[str, ...]
    original: str
    kind: ForwardKind
    location: Location
    # The formula, or for auto_element_wise the one derived from the backward formula,
    # analysed at load; None for auto_linear (which re-runs the operator).
    formula: AnalysedForward | None = None


@dataclass(frozen=True)
class DifferentiabilityInfo:
    """How an operator is differentiated: its derivatives.yaml entry, analysed."""

    function: NativeFunction
    op: str | None  # the Backward class name, None when nothing is differentiable
    derivatives: tuple[Derivative, ...]
    forward_derivatives: tuple[ForwardDerivative, ...]
    non_differentiable: tuple[str, ...]
    output_differentiability: tuple[bool, ...] | None
    location: Location

    @property
    def args_with_derivatives(self) -> tuple[str, ...]:
        """The inputs that get gradients (one next edge each), in schema order."""
        names = {n for d in self.derivatives for n in d.var_names}
        return tuple(a.name for a in self.function.arguments if a.name in names)

    @property
    def saved(self) -> tuple[SavedAttribute, ...]:
        """What the node saves: inputs sorted by name, then outputs sorted by name."""
        by_name: dict[str, SavedAttribute] = {}
        for derivative in self.derivatives:
            for attribute in derivative.formula.saved:
                by_name.setdefault(attribute.name, attribute)
        inputs = sorted(
            (a for a in by_name.values() if a.kind is not SavedKind.OUTPUT),
            key=lambda a: a.name,
        )
        outputs = sorted(
            (a for a in by_name.values() if a.kind is SavedKind.OUTPUT),
            key=lambda a: a.name,
        )
        return (*inputs, *outputs)

    @property
    def differentiable_outputs(self) -> tuple[bool, ...]:
        count = len(self.function.schema.returns)
        if self.output_differentiability is not None:
            return self.output_differentiability
        uses_only_grad = all(
            not d.formula.uses_grads and not d.formula.grads_indices
            for d in self.derivatives
        )
        if uses_only_grad and count > 1:
            # `grad` alone means only the first output is differentiable (PyTorch).
            return (True,) + (False,) * (count - 1)
        return (True,) * count


@dataclass(frozen=True)
class Model:
    """Everything the templates are rendered from."""

    native_functions: tuple[NativeFunction, ...]
    infos: tuple[DifferentiabilityInfo, ...]
    kernels: KernelsModule | None = None  # the user's kernels module (--kernels)

    @property
    def user_names(self) -> frozenset[str]:
        """The names the user's kernels module lends to expressions and formulas."""
        return self.kernels.names if self.kernels is not None else frozenset()
