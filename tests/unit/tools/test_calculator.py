"""calculator: an AST whitelist with bounds on length, nesting, number size and exponents; never eval."""

import ast
import math
import time
from pathlib import Path

import pytest

from agentkit.adapters.tools import calculator as calculator_module
from agentkit.adapters.tools.calculator import CalculatorLimits, evaluate, format_number, make_calculator_tool
from agentkit.adapters.tools.errors import CalculatorError
from agentkit.application.tools import ToolError


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("7 / 2", 3.5),
        ("7 // 2", 3),
        ("7 % 3", 1),
        ("-2 ** 2", -4),
        ("2 ** -1", 0.5),
        ("+5 - -5", 10),
        ("1_000 * 3", 3000),
        ("2 ** 100", 2**100),
        ("sqrt(16) + abs(-3)", 7.0),
        ("round(2.675, 2)", round(2.675, 2)),
        ("max(1, 5, 3) - min(4, 2)", 3),
        ("floor(2.7) + ceil(2.1)", 5),
        ("log(e)", 1.0),
        ("log(8, 2)", 3.0),
        ("2 * pi", 2 * math.pi),
        ("  42  ", 42),
    ],
)
def test_evaluates_arithmetic(expression: str, expected: float) -> None:
    assert evaluate(expression) == pytest.approx(expected)


def test_keeps_integers_exact() -> None:
    result = evaluate("12345678901234567890 * 98765432109876543210")
    assert result == 12345678901234567890 * 98765432109876543210
    assert isinstance(result, int)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(430.6185, "430.6185"), (0.1 + 0.2, "0.3"), (2870.79 * 0.15, "430.6185"), (10**20, str(10**20)), (3.0, "3")],
)
def test_formats_results_the_way_people_write_them(value: float, shown: str) -> None:
    assert format_number(value) == shown


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('id')",
        "open('/etc/passwd').read()",
        "eval('1')",
        "exec('x = 1')",
        "().__class__.__bases__[0].__subclasses__()",
        "(1).__class__",
        "x",
        "lambda: 1",
        "[1, 2, 3]",
        "{'a': 1}",
        "'a' * 3",
        "b'x'",
        "1 if 1 else 2",
        "1 < 2",
        "1 and 2",
        "not 1",
        "~1",
        "1 << 3",
        "1 | 2",
        "1 ^ 2",
        "1 & 2",
        "[x for x in range(10)]",
        "(x := 5)",
        "f'{1}'",
        "True + 1",
        "None",
        "1j * 2",
        "...",
        "sqrt(x=4)",
        "max(*[1, 2])",
        "math.sqrt(4)",
        "sqrt.__call__(4)",
        "getattr(1, 'real')",
        "globals()",
        "print(1)",
    ],
)
def test_refuses_anything_outside_the_whitelist(expression: str) -> None:
    with pytest.raises(CalculatorError):
        evaluate(expression)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("1 / 0", "division by zero"),
        ("1 // 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("0 ** -1", "division by zero"),
        ("sqrt(-1)", "not defined"),
        ("log(0)", "not defined"),
        ("(-8) ** 0.5", "not a real number"),
        ("exp(1000)", "too large"),
        ("10.0 ** 400", "too large"),
        ("1e308 * 10", "too large"),
        ("1e999", "too large"),
        ("", "empty"),
        ("1 +", "not a valid"),
        ("(1", "not a valid"),
        ("min(1)", "2 to 20 arguments"),
        ("round(1.5, 2.5)", "whole number"),
        ("round(5, -1000000)", "whole number"),
    ],
)
def test_explains_what_went_wrong(expression: str, message: str) -> None:
    with pytest.raises(CalculatorError, match=message):
        evaluate(expression)


@pytest.mark.parametrize(
    "expression",
    [
        "9 ** 9 ** 9",  # a number with ~370 million digits: would run for hours
        "2 ** 10 ** 10",
        "10 ** 1001",
        "(10 ** 999) * (10 ** 999)",
        "99999 ** 99999",
        "2 ** 100000",
        "-(9 ** 9 ** 9)",
        "max(1, 9 ** 9 ** 9)",
        "1.0000001 ** 99999999999",
    ],
)
def test_refuses_runaway_numbers_at_once(expression: str) -> None:
    started = time.perf_counter()
    with pytest.raises(CalculatorError, match=r"too large|digits|exponent"):
        evaluate(expression)
    assert time.perf_counter() - started < 0.5


def test_refuses_long_expressions_before_parsing() -> None:
    with pytest.raises(CalculatorError, match="characters long; the limit is 500"):
        evaluate("1+" * 300 + "1")


@pytest.mark.parametrize("expression", ["-(" * 40 + "1" + ")" * 40, "-" * 100 + "1", "abs(" * 35 + "1" + ")" * 35])
def test_refuses_deep_nesting(expression: str) -> None:
    with pytest.raises(CalculatorError, match=r"nested too deeply|not a valid"):
        evaluate(expression)


def test_parentheses_alone_are_not_nesting() -> None:
    # They leave no trace in the tree, so they cost nothing to evaluate.
    assert evaluate("(" * 40 + "1" + ")" * 40) == 1


def test_parser_bombs_within_the_length_limit_fail_cleanly() -> None:
    # Far more nesting than the parser accepts, but the limits are set high enough to reach it.
    limits = CalculatorLimits(max_chars=100_000, max_depth=100_000)
    with pytest.raises(CalculatorError):
        evaluate("(" * 50_000 + "1" + ")" * 50_000, limits)


def test_limits_are_configurable() -> None:
    tight = CalculatorLimits(max_chars=10, max_depth=3, max_digits=5, max_exponent=4)
    assert evaluate("99999", tight) == 99999
    with pytest.raises(CalculatorError, match="digits"):
        evaluate("100000", tight)
    with pytest.raises(CalculatorError, match="exponent"):
        evaluate("2 ** 5", tight)
    with pytest.raises(CalculatorError, match="nested"):
        evaluate("-(-(-1))", tight)


def test_the_tool_formats_and_reports_errors_as_tool_errors() -> None:
    calculator = make_calculator_tool(CalculatorLimits())
    assert calculator.name == "calculator"
    assert calculator("2870.79 * 0.15") == "430.6185"
    with pytest.raises(ToolError, match="division by zero"):
        calculator("1/0")


def test_the_module_never_calls_eval_exec_or_compile() -> None:
    tree = ast.parse(Path(calculator_module.__file__).read_text(encoding="utf-8"))
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not called & {"eval", "exec", "compile", "__import__", "getattr"}
