"""calculator: arithmetic parsed with `ast` and walked against a whitelist; never eval or exec.

Every input is bounded before any work is done, so no expression can hang or exhaust the
process: its length, its nesting, each number's size and, before a power is computed, the
size of its result (so `9**9**9` is refused at once instead of running for hours).
"""

import ast
import math
import operator
from collections.abc import Callable
from typing import Any, Final

import msgspec

from agentkit.adapters.tools.errors import CalculatorError
from agentkit.application.tools import Tool, tool

Number = int | float


class CalculatorLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Bounds on what the calculator accepts.

    Attributes:
        max_chars: Longest expression, in characters.
        max_depth: Deepest nesting of operations and parentheses.
        max_digits: Most decimal digits of any integer, given or computed.
        max_exponent: Largest absolute exponent of a power.
    """

    max_chars: int = 500
    max_depth: int = 30
    max_digits: int = 1000
    max_exponent: int = 10_000


_BINARY: Final[dict[type[ast.operator], Callable[[Any, Any], Any]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_UNARY: Final[dict[type[ast.unaryop], Callable[[Any], Any]]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_CONSTANTS: Final[dict[str, float]] = {"pi": math.pi, "e": math.e}
# name -> (function, fewest arguments, most arguments); none of them can grow a number much.
_FUNCTIONS: Final[dict[str, tuple[Callable[..., Any], int, int]]] = {
    "abs": (abs, 1, 1),
    "round": (round, 1, 2),
    "min": (min, 2, 20),
    "max": (max, 2, 20),
    "sqrt": (math.sqrt, 1, 1),
    "log": (math.log, 1, 2),
    "log10": (math.log10, 1, 1),
    "exp": (math.exp, 1, 1),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "sin": (math.sin, 1, 1),
    "cos": (math.cos, 1, 1),
    "tan": (math.tan, 1, 1),
}
_ALLOWED_HINT = "use numbers, + - * / // % **, parentheses, pi, e and the functions " + ", ".join(sorted(_FUNCTIONS))


def evaluate(expression: str, limits: CalculatorLimits | None = None) -> Number:
    """Evaluate an arithmetic expression safely.

    Args:
        expression: The expression, for example `(1200 + 34.5) * 0.15`.
        limits: The bounds to enforce (defaults: `CalculatorLimits()`).

    Returns:
        The value, an int when every step stayed integral.

    Raises:
        CalculatorError: the expression is not allowed, too large, or cannot be evaluated.
    """
    limits = limits or CalculatorLimits()
    text = expression.strip()
    if not text:
        raise CalculatorError("the expression is empty")
    if len(text) > limits.max_chars:
        raise CalculatorError(f"the expression is {len(text)} characters long; the limit is {limits.max_chars}")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise CalculatorError(f"not a valid arithmetic expression: {text!r}") from None
    return _Evaluator(limits).visit(tree.body, depth=1)


def format_number(value: Number) -> str:
    """Show a result the way a person would write it: `518.517`, not `518.5169999999999`."""
    if isinstance(value, int):
        return str(value)
    return f"{value:.15g}"


class _Evaluator:
    """Walks the tree, allowing only whitelisted nodes and checking every intermediate value."""

    def __init__(self, limits: CalculatorLimits) -> None:
        self._limits = limits
        self._int_bound = 10**limits.max_digits

    def visit(self, node: ast.expr, *, depth: int) -> Number:
        if depth > self._limits.max_depth:
            raise CalculatorError(f"the expression is nested too deeply (limit {self._limits.max_depth})")
        value = self._visit(node, depth)
        return self._checked(value)

    def _visit(self, node: ast.expr, depth: int) -> Any:
        if isinstance(node, ast.Constant):
            # bool is an int subclass and complex is a number, but neither belongs here.
            if type(node.value) not in (int, float):
                raise CalculatorError(f"{node.value!r} is not a number; {_ALLOWED_HINT}")
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in _CONSTANTS:
                raise CalculatorError(f"unknown name {node.id!r}; {_ALLOWED_HINT}")
            return _CONSTANTS[node.id]
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return _UNARY[type(node.op)](self.visit(node.operand, depth=depth + 1))
        if isinstance(node, ast.BinOp):
            left = self.visit(node.left, depth=depth + 1)
            right = self.visit(node.right, depth=depth + 1)
            return self._binary(node.op, left, right)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        raise CalculatorError(f"{type(node).__name__} is not allowed; {_ALLOWED_HINT}")

    def _binary(self, op: ast.operator, left: Number, right: Number) -> Any:
        try:
            if isinstance(op, ast.Pow):
                return self._power(left, right)
            if type(op) not in _BINARY:
                raise CalculatorError(f"the operator {type(op).__name__} is not allowed; {_ALLOWED_HINT}")
            return _BINARY[type(op)](left, right)
        except ZeroDivisionError:
            raise CalculatorError("division by zero") from None
        except OverflowError:
            raise CalculatorError("the result is too large") from None

    def _power(self, base: Number, exponent: Number) -> Any:
        if abs(exponent) > self._limits.max_exponent:
            raise CalculatorError(f"the exponent {exponent} is too large (limit {self._limits.max_exponent})")
        # Estimate the size of an integer power before computing it: the work grows with it.
        if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
            digits = exponent * math.log10(abs(base))
            if digits > self._limits.max_digits:
                raise CalculatorError(
                    f"the result would have about {digits:.0f} digits (limit {self._limits.max_digits})"
                )
        result = base**exponent
        if isinstance(result, complex):
            raise CalculatorError("the result is not a real number (a negative number to a fractional power)")
        return result

    def _call(self, node: ast.Call, depth: int) -> Any:
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
            raise CalculatorError(f"only these functions may be called: {', '.join(sorted(_FUNCTIONS))}")
        name = node.func.id
        function, fewest, most = _FUNCTIONS[name]
        if node.keywords or any(isinstance(arg, ast.Starred) for arg in node.args):
            raise CalculatorError(f"{name}() takes plain positional arguments")
        if not fewest <= len(node.args) <= most:
            raise CalculatorError(f"{name}() takes {fewest} to {most} arguments, got {len(node.args)}")
        args = [self.visit(arg, depth=depth + 1) for arg in node.args]
        if name == "round" and len(args) == 2 and (not isinstance(args[1], int) or abs(args[1]) > 100):
            raise CalculatorError("round()'s second argument must be a whole number between -100 and 100")
        try:
            return function(*args)
        except ZeroDivisionError:
            raise CalculatorError(f"division by zero in {name}()") from None
        except ValueError:
            raise CalculatorError(f"{name}() is not defined for {', '.join(map(format_number, args))}") from None
        except OverflowError:
            raise CalculatorError(f"the result of {name}() is too large") from None

    def _checked(self, value: Any) -> Number:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CalculatorError(f"the result is not a number: {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise CalculatorError("the result is too large (or not a number)")
        if isinstance(value, int) and not -self._int_bound < value < self._int_bound:
            raise CalculatorError(f"a number has more than {self._limits.max_digits} digits")
        return value


def make_calculator_tool(limits: CalculatorLimits) -> Tool[[str], str]:
    """The `calculator` tool with the given limits."""

    # bounded by construction, and a closure over its limits: it stays in this process whatever
    # TOOL_ISOLATION says (a worker process imports tools by name)
    @tool(name="calculator", idempotent=True, isolation="thread")
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression exactly and return the result.

        Supports + - * / // % ** and parentheses, pi and e, and the functions abs, round, min,
        max, sqrt, log, log10, exp, floor, ceil, sin, cos and tan. Write percentages as
        multiplications: 15% of 2400 is `2400 * 0.15`.

        Args:
            expression: The expression to evaluate, for example `(1200 + 34.5) * 0.15`.
        """
        return format_number(evaluate(expression, limits))

    return calculator
