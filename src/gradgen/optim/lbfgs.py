"""torch.optim.LBFGS: limited-memory BFGS over all parameters as one flat vector, with
an optional strong-Wolfe line search (after minFunc, as PyTorch's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradgen.grad_mode import enable_grad, no_grad
from gradgen.tensor import Tensor
from gradgen.variable_type_utils import increment_version

from .optimizer import Optimizer, ParamsT, check_argument, real_view, scalar

__all__ = ["LBFGS"]

# The flat vectors and their products are numpy arrays and numpy scalars of the
# parameters' dtype, as PyTorch's are 1-d and 0-d tensors of that dtype.
Objective = Callable[[list[np.ndarray], Any, np.ndarray], tuple[float, np.ndarray]]


def _cubic_interpolate(
    x1: Any,
    f1: Any,
    g1: Any,
    x2: Any,
    f2: Any,
    g2: Any,
    bounds: tuple[Any, Any] | None = None,
) -> Any:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2,
    clamped to `bounds` (default: between x1 and x2); their middle when the cubic has
    no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = np.sqrt(d2_square)
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


class _Bracket:
    """Step lengths with their losses, gradients and directional derivatives."""

    def __init__(self, points: list[tuple[Any, float, np.ndarray, Any]]) -> None:
        self.t = [p[0] for p in points]
        self.f = [p[1] for p in points]
        self.g = [p[2] for p in points]
        self.gtd = [p[3] for p in points]

    def set(self, index: int, point: tuple[Any, float, np.ndarray, Any]) -> None:
        self.t[index], self.f[index], self.g[index], self.gtd[index] = point

    def ends(self) -> tuple[int, int]:
        """(low, high): the index of the lower loss first."""
        return (0, 1) if self.f[0] <= self.f[-1] else (1, 0)


def _strong_wolfe(
    objective: Objective,
    x: list[np.ndarray],
    t: Any,
    d: np.ndarray,
    f: float,
    g: np.ndarray,
    gtd: Any,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, np.ndarray, Any, int]:
    """A step length t along d meeting the strong Wolfe conditions: widen until a
    bracket holds one, then zoom in. Returns (loss, gradient, t, evaluations)."""
    f_new, g_new = objective(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    previous = (0, f, g.copy(), gtd)
    done = False
    ls_iter = 0
    bracket: _Bracket | None = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= previous[1]):
            bracket = _Bracket([previous, (t, f_new, g_new.copy(), gtd_new)])
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = _Bracket([(t, f_new, g_new, gtd_new)])
            done = True
            break
        if gtd_new >= 0:
            bracket = _Bracket([previous, (t, f_new, g_new.copy(), gtd_new)])
            break
        bounds = (t + 0.01 * (t - previous[0]), t * 10)
        t_next = _cubic_interpolate(
            *previous[:2], previous[3], t, f_new, gtd_new, bounds
        )
        previous = (t, f_new, g_new.copy(), gtd_new)
        t = t_next
        f_new, g_new = objective(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls or bracket is None:
        bracket = _Bracket([(0, f, g, None), (t, f_new, g_new, None)])
    zoom = _Zoom(objective, x, d, f, gtd, c1, c2, tolerance_change)
    zoom.ls_iter, zoom.evals = ls_iter, evals
    return zoom.run(bracket, done, max_ls)


class _Zoom:
    """The second phase of the line search: shrink the bracket by cubic
    interpolation until a point meets the strong Wolfe conditions."""

    def __init__(
        self,
        objective: Objective,
        x: list[np.ndarray],
        d: np.ndarray,
        f: float,
        gtd: Any,
        c1: float,
        c2: float,
        tolerance_change: float,
    ) -> None:
        self.objective, self.x, self.d = objective, x, d
        self.f, self.gtd, self.c1, self.c2 = f, gtd, c1, c2
        self.tolerance_change = tolerance_change
        self.d_norm = np.abs(d).max()
        self.ls_iter = 0
        self.evals = 0

    def run(
        self, bracket: _Bracket, done: bool, max_ls: int
    ) -> tuple[float, np.ndarray, Any, int]:
        insufficient = False
        low, high = bracket.ends()
        while not done and self.ls_iter < max_ls:
            if abs(bracket.t[1] - bracket.t[0]) * self.d_norm < self.tolerance_change:
                break
            t, insufficient = self._next_point(bracket, insufficient)
            f_new, g_new = self.objective(self.x, t, self.d)
            self.evals += 1
            gtd_new = g_new.dot(self.d)
            self.ls_iter += 1
            point = (t, f_new, g_new.copy(), gtd_new)
            if f_new > (self.f + self.c1 * t * self.gtd) or f_new >= bracket.f[low]:
                bracket.set(high, point)
                low, high = bracket.ends()
                continue
            if abs(gtd_new) <= -self.c2 * self.gtd:
                done = True
            elif gtd_new * (bracket.t[high] - bracket.t[low]) >= 0:
                bracket.set(
                    high,
                    (bracket.t[low], bracket.f[low], bracket.g[low], bracket.gtd[low]),
                )
            bracket.set(low, point)
        return bracket.f[low], bracket.g[low], bracket.t[low], self.evals

    @staticmethod
    def _next_point(bracket: _Bracket, insufficient: bool) -> tuple[Any, bool]:
        """The interpolated step, kept away from the bracket's ends (by a tenth of its
        width) when the last steps made too little progress."""
        t = _cubic_interpolate(
            bracket.t[0],
            bracket.f[0],
            bracket.gtd[0],
            bracket.t[1],
            bracket.f[1],
            bracket.gtd[1],
        )
        top, bottom = max(bracket.t), min(bracket.t)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) >= eps:
            return t, False
        if insufficient or t >= top or t <= bottom:
            t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
            return t, False
        return t, True


def _wrap(value: Any) -> Any:
    """State values as PyTorch keeps them: arrays and numpy scalars as tensors."""
    if isinstance(value, np.ndarray):
        return Tensor(value)
    if isinstance(value, np.generic):
        return Tensor(np.array(value))
    if isinstance(value, list):
        return [_wrap(item) for item in value]
    return value


def _unwrap(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value._data if value._data.ndim else value._data[()]
    if isinstance(value, list):
        return [_unwrap(item) for item in value]
    return value


_HISTORY = ("d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad")


class LBFGS(Optimizer):
    """Each `step(closure)` runs up to max_iter quasi-Newton iterations on the loss
    the closure computes: the direction from the last history_size (s, y) pairs by
    the two-loop recursion, the step lr (the first one scaled to 1/|g|_1 when that is
    smaller) or a strong-Wolfe line search. Only one parameter group."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        check_argument("learning rate", lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError(
                "LBFGS doesn't support per-parameter options (parameter groups)"
            )
        self._params: list[Tensor] = self.param_groups[0]["params"]

    # -- the parameters as one flat vector --------------------------------------------
    def _flat_grad(self) -> np.ndarray:
        views = []
        for param in self._params:
            grad = param.grad
            array = (
                np.zeros_like(param._data) if grad is None else grad._data
            ).reshape(-1)
            views.append(real_view(array))
        return np.concatenate(views)

    def _add_grad(self, step_size: Any, update: np.ndarray) -> None:
        offset = 0
        for param in self._params:
            target = real_view(param._data)
            size = target.size
            target += step_size * update[offset : offset + size].reshape(target.shape)
            increment_version(param)
            offset += size

    def _clone_params(self) -> list[np.ndarray]:
        return [param._data.copy() for param in self._params]

    def _set_params(self, arrays: list[np.ndarray]) -> None:
        for param, array in zip(self._params, arrays):
            np.copyto(param._data, array)
            increment_version(param)

    def _loss(self, closure: Callable[[], Any]) -> Any:
        with enable_grad():
            return closure()

    # -- the step ---------------------------------------------------------------------
    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Minimise the closure's loss by up to max_iter iterations; return the loss
        the closure gave first. The closure is required (as PyTorch's: calling
        `step()` without one is Python's TypeError)."""
        with no_grad():
            return self._minimise(closure)

    def _minimise(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        original = self._loss(closure)
        loss = float(original)
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= group["tolerance_grad"]:
            return original
        # PyTorch adds "al" to the state in its second iteration, the rest at the end.
        memory = {key: _unwrap(state.get(key)) for key in ("al", *_HISTORY)}
        memory["prev_loss"] = state.get("prev_loss")
        self._iterate(closure, group, state, memory, loss, flat_grad)
        for key, value in memory.items():
            if value is not None or key in state:
                state[key] = _wrap(value)
        return original

    def _iterate(
        self,
        closure: Callable[[], Any],
        group: dict[str, Any],
        state: dict[str, Any],
        memory: dict[str, Any],
        loss: float,
        flat_grad: np.ndarray,
    ) -> None:
        """The quasi-Newton iterations of one step; `memory` holds the history."""
        lr = scalar(group["lr"])
        evals = 1
        for n_iter in range(1, group["max_iter"] + 1):
            state["n_iter"] += 1
            self._direction(memory, flat_grad, state["n_iter"], group["history_size"])
            d = memory["d"]
            if memory["prev_flat_grad"] is None:
                memory["prev_flat_grad"] = flat_grad.copy()
            else:
                np.copyto(memory["prev_flat_grad"], flat_grad)
            memory["prev_loss"] = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            memory["t"] = t
            gtd = flat_grad.dot(d)
            if gtd > -group["tolerance_change"]:
                break
            loss, flat_grad, t, ls_evals = self._move(
                closure, group, memory, loss, flat_grad, t, gtd, evals, n_iter
            )
            memory["t"] = t
            evals += ls_evals
            state["func_evals"] += ls_evals
            if self._converged(group, memory, loss, flat_grad, evals, n_iter):
                break

    def _direction(
        self, memory: dict[str, Any], flat_grad: np.ndarray, n_iter: int, size: int
    ) -> None:
        """The search direction -H g, H the inverse-Hessian estimate from the (s, y)
        history, updated with the last step when its curvature y.s is positive."""
        if n_iter == 1:
            memory.update(d=-flat_grad, old_dirs=[], old_stps=[], ro=[], H_diag=1)
            return
        dirs, steps, ro = memory["old_dirs"], memory["old_stps"], memory["ro"]
        y = flat_grad - memory["prev_flat_grad"]
        s = memory["d"] * memory["t"]
        ys = y.dot(s)
        if ys > 1e-10:
            if len(dirs) == size:
                del dirs[0], steps[0], ro[0]
            dirs.append(y)
            steps.append(s)
            ro.append(1.0 / ys)
            memory["H_diag"] = ys / y.dot(y)
        if memory["al"] is None:
            memory["al"] = [None] * size
        al = memory["al"]
        q = -flat_grad
        for i in range(len(dirs) - 1, -1, -1):
            al[i] = steps[i].dot(q) * ro[i]
            q += -al[i] * dirs[i]
        r = q * memory["H_diag"]
        for i in range(len(dirs)):
            be_i = dirs[i].dot(r) * ro[i]
            r += (al[i] - be_i) * steps[i]
        memory["d"] = r

    def _move(
        self,
        closure: Callable[[], Any],
        group: dict[str, Any],
        memory: dict[str, Any],
        loss: float,
        flat_grad: np.ndarray,
        t: Any,
        gtd: Any,
        evals: int,
        n_iter: int,
    ) -> tuple[float, np.ndarray, Any, int]:
        """Step along d: by t, or by the line search's step; (loss, gradient, t,
        evaluations) after it."""
        d = memory["d"]
        line_search = group["line_search_fn"]
        if line_search is not None:
            if line_search != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            loss, flat_grad, t, ls_evals = _strong_wolfe(
                self._directional_objective(closure),
                self._clone_params(),
                t,
                d,
                loss,
                flat_grad,
                gtd,
                max_ls=group["max_eval"] - evals,
            )
            self._add_grad(t, d)
            return loss, flat_grad, t, ls_evals
        self._add_grad(t, d)
        if n_iter == group["max_iter"]:
            return loss, flat_grad, t, 0
        loss = float(self._loss(closure))
        return loss, self._flat_grad(), t, 1

    def _directional_objective(self, closure: Callable[[], Any]) -> Objective:
        def objective(
            x: list[np.ndarray], t: Any, d: np.ndarray
        ) -> tuple[float, np.ndarray]:
            self._add_grad(t, d)
            loss = float(self._loss(closure))
            flat_grad = self._flat_grad()
            self._set_params(x)
            return loss, flat_grad

        return objective

    @staticmethod
    def _converged(
        group: dict[str, Any],
        memory: dict[str, Any],
        loss: float,
        flat_grad: np.ndarray,
        evals: int,
        n_iter: int,
    ) -> bool:
        return bool(
            n_iter == group["max_iter"]
            or evals >= group["max_eval"]
            or np.abs(flat_grad).max() <= group["tolerance_grad"]
            or np.abs(memory["d"] * memory["t"]).max() <= group["tolerance_change"]
            or abs(loss - memory["prev_loss"]) < group["tolerance_change"]
        )
