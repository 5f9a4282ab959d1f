"""Operators and Tensor methods as user code calls them, with no ignore comment.

`mypy` checks this file (pyproject.toml's [tool.mypy] `files`) through the generated
stubs (generated/*.pyi, codegen/stubs.py); tests/test_type_stub.py also runs it, so
every call here is valid at runtime too, and checks it against an installed wheel.
"""

from __future__ import annotations

from typing_extensions import assert_type

import gradgen
from gradgen import Tensor
from gradgen.generated import ops

x = gradgen.randn(3, 4, requires_grad=True)
assert_type(gradgen.add(x, 1.0, alpha=2), Tensor)
assert_type(gradgen.add(x, x), Tensor)
assert_type(gradgen.mul(x, 2), Tensor)
assert_type(ops.mul(x, 2), Tensor)
assert_type(gradgen.pow(x, 2), Tensor)
assert_type(gradgen.pow(2, x), Tensor)
assert_type(x.pow(x), Tensor)
assert_type(x.sum(), Tensor)
assert_type(x.sum(1, keepdim=True), Tensor)
assert_type(x.sum((0, 1)), Tensor)
assert_type(x.sum(dtype=gradgen.float64), Tensor)
assert_type(x.mean(dim=0), Tensor)
assert_type(x.permute(1, 0), Tensor)
assert_type(x.permute((1, 0)), Tensor)
assert_type(x.view(4, 3), Tensor)
assert_type(x.reshape(2, 6), Tensor)
assert_type(gradgen.reshape(x, (12,)), Tensor)
assert_type(x.transpose(0, 1).contiguous(), Tensor)
assert_type(x.relu().exp().log1p().mean(), Tensor)
assert_type(x.clamp(min=0.0), Tensor)
assert_type(x.clamp(min=0.0, max=1.0), Tensor)
assert_type(gradgen.where(x > 0, x, 0.0), Tensor)
assert_type(gradgen.cat([x, x], dim=0), Tensor)
assert_type(gradgen.stack((x, x)), Tensor)
assert_type(gradgen.unbind(x), tuple[Tensor, ...])
assert_type(x.split(2, dim=1), tuple[Tensor, ...])
assert_type(x.chunk(2), tuple[Tensor, ...])
largest = x.max(dim=1)
assert_type(largest.values, Tensor)
assert_type(largest.indices, Tensor)
values, indices = x.sort(descending=True)
assert_type(values, Tensor)
assert_type(x.max(), Tensor)
assert_type(gradgen.allclose(x, x), bool)
assert_type(x.softmax(-1), Tensor)
assert_type(x.unsqueeze(0).squeeze(0), Tensor)
assert_type(x.matmul(x.t()), Tensor)
assert_type(x.detach().add_(1), Tensor)
assert_type(x.abs().sqrt().neg(), Tensor)
