#!/usr/bin/env python3
"""Differential fuzzing of lathe's Jinja interpreter against jinja2 in transformers' chat template
environment. Generates random templates (expressions and filters, whitespace control, scoping and
loop control), renders each with jinja2 and with the jinja_render_tool driver (built from
tests/unit/chat), and prints the cases whose output or error/no-error outcome differ.

  cmake --build BUILD --target jinja_render_tool
  python3 tools/fuzz_jinja.py --driver BUILD/tests/unit/chat/jinja_render_tool --kind all --seed 1 -n 3000

Known, deliberate differences are skipped: printf-style '%' on strings (unsupported here, a clear
error) and jinja2 printing a generator's memory address (an error here).
"""
import argparse
import copy
import json
import random
import subprocess
import sys
import tempfile

from transformers.utils.chat_template_utils import _compile_jinja_template

EXPR_CONTEXT = {
    "s": "Héllo, World  ", "e": "", "i": 7, "n": -3, "f": 2.5, "z": 0, "b": True, "no": None,
    "l": [3, 1, 2], "sl": ["b", "a", "C"], "d": {"k": "v", "n": 1, "items": "I"},
    "ld": [{"a": 1, "b": "x"}, {"a": 2}], "nested": {"x": {"y": [1, {"z": "deep"}]}},
}
ATOMS = ["s", "e", "i", "n", "f", "z", "b", "no", "l", "sl", "d", "ld", "nested", "u", "1", "0", "-1", "2.0", "0.5",
         "'ab'", "''", "'x y'", "true", "false", "none", "[]", "[1, 'a']", "{}", "{'k': 1}", "(1, 2)", "'\\n a \\t'"]
BINARY = ["+", "-", "*", "/", "//", "~", "==", "!=", "<", ">", "<=", ">=", "and", "or", "in", "not in"]
FILTERS = ["length", "trim", "upper", "lower", "title", "capitalize", "first", "last", "list", "string", "int", "float",
           "abs", "reverse|list", "sort", "unique|list", "join(',')", "join", "default('D')", "default('D', true)",
           "tojson", "tojson(indent=1)", "items|list", "dictsort", "sum", "min", "max", "count", "round", "safe",
           "e", "replace('a', 'b')", "wordcount", "indent(2)", "map('string')|list", "select|list", "reject|list",
           "selectattr('a')|list", "map(attribute='a')|list", "batch(2)|list", "center(9)"]
TESTS = ["defined", "undefined", "none", "string", "number", "integer", "float", "mapping", "sequence", "iterable",
         "boolean", "true", "false", "odd", "even", "lower", "upper", "divisibleby 2", "in [1, 2]", "eq 1", "callable"]
ACCESS = [".upper()", ".lower()", ".strip()", ".split()", ".split(',')", ".startswith('H')", ".endswith(' ')",
          ".replace('l', 'L')", ".title()", ".find('o')", ".items()", ".keys()", ".values()", ".get('k')",
          ".get('zz', 'dflt')", ".count(1)", ".index(1)", "[0]", "[-1]", "[1:]", "[::-1]", "[:2]", "['k']", ".k",
          ".a", "[5]", ".x.y", "[1:-1]", "[::2]", ".lstrip('H')", ".rstrip()", ".isdigit()", ".splitlines()"]


def gen_expr(rng, depth=0):
    r = rng.random()
    if depth > 2 or r < 0.3:
        return rng.choice(ATOMS)
    if r < 0.45:
        return f"({gen_expr(rng, depth + 1)} {rng.choice(BINARY)} {gen_expr(rng, depth + 1)})"
    if r < 0.6:
        return f"({gen_expr(rng, depth + 1)}|{rng.choice(FILTERS)})"
    if r < 0.7:
        return f"({gen_expr(rng, depth + 1)} is {rng.choice(['', 'not '])}{rng.choice(TESTS)})"
    if r < 0.82:
        return rng.choice(["s", "e", "l", "d", "ld", "nested", "sl", "u"]) + rng.choice(ACCESS)
    if r < 0.9:
        return f"({gen_expr(rng, depth + 1)} if {gen_expr(rng, depth + 1)} else {gen_expr(rng, depth + 1)})"
    if r < 0.95:
        return f"(not {gen_expr(rng, depth + 1)})"
    return f"(-{gen_expr(rng, depth + 1)})"


def gen_expression_case(rng):
    def statement():
        r = rng.random()
        if r < 0.5:
            return "{{ " + gen_expr(rng) + " }}"
        if r < 0.7:
            return "{% for x in " + gen_expr(rng) + " %}[{{ x }}|{{ loop.index }}]{% else %}E{% endfor %}"
        if r < 0.85:
            return "{% if " + gen_expr(rng) + " %}T{% elif " + gen_expr(rng) + " %}M{% else %}F{% endif %}"
        return "{% set v = " + gen_expr(rng) + " %}{{ v }}"
    return " ".join(statement() for _ in range(rng.randint(1, 3))), EXPR_CONTEXT


WS_TEXT = [" ", "  ", "\t", "\n", "\n\n", " \n ", "a", "b c", "\u00a0", "\r\n", "x\n  ", "\n\t"]


def gen_whitespace_case(rng):
    def control():
        return rng.choice(["", "", "-", "+"])

    def piece(depth):
        r = rng.random()
        if r < 0.35:
            return "".join(rng.choice(WS_TEXT) for _ in range(rng.randint(1, 3)))
        if r < 0.5:
            return ("{{" + rng.choice(["", "-"]) + " " + rng.choice(["'v'", "1", "x", "' s '"]) + " " +
                    rng.choice(["", "-"]) + "}}")
        if r < 0.6:
            return "{#" + control() + " c " + control() + "#}"
        if r < 0.65:
            return ("{%" + control() + " raw " + control() + "%}" + piece(3) + "{%" + control() + " endraw " +
                    control() + "%}")
        if depth > 2:
            return "z"
        if r < 0.8:
            return ("{%" + control() + " if " + rng.choice(["true", "false", "x"]) + " " + control() + "%}" +
                    body(depth) + ("{%" + control() + " else " + control() + "%}" + body(depth)
                                   if rng.random() < 0.4 else "") + "{%" + control() + " endif " + control() + "%}")
        if r < 0.9:
            return ("{%" + control() + " for i in [1, 2] " + control() + "%}" + body(depth) + "{%" + control() +
                    " endfor " + control() + "%}")
        return "{%" + control() + " set y = 1 " + control() + "%}" + body(depth)

    def body(depth):
        return "".join(piece(depth + 1) for _ in range(rng.randint(0, 3)))
    return body(0) + rng.choice(["", "\n", "\n\n", " "]), {"x": "X"}


def gen_scope_case(rng):
    def value(in_loop):
        plain = ["a", "b", "c", "ns.x", "1", "'s'", "a ~ b", "(a or 0) + 1", "i", "j", "m(1)", "m2()", "k", "v", "x"]
        looped = ["loop.index", "loop.previtem", "loop.nextitem", "loop.revindex", "loop.cycle('p','q')",
                  "loop.length", "loop.first", "loop.last", "varargs"]
        return rng.choice(plain + (looped if in_loop else []))

    def statement(depth, in_loop):
        r = rng.random()
        if r < 0.25:
            return "{{ " + value(in_loop) + " }}"
        if r < 0.45:
            return "{% set " + rng.choice(["a", "b", "c"]) + " = " + value(in_loop) + " %}"
        if r < 0.52:
            return "{% set ns.x = " + value(in_loop) + " %}"
        if depth > 3:
            return "."
        if r < 0.65:
            source = rng.choice(["[1, 2, 3]", "'ab'", "[]", "d", "d.items()", "range(3)"])
            target = "k, v" if source == "d.items()" else rng.choice(["i", "j"])
            loop_filter = " if " + target if target != "k, v" and rng.random() < 0.3 else ""
            return ("{% for " + target + " in " + source + loop_filter + " %}" + block(depth, True) +
                    ("{% else %}" + block(depth, in_loop) if rng.random() < 0.3 else "") + "{% endfor %}")
        if r < 0.78:
            return ("{% if " + value(in_loop) + " %}" + block(depth, in_loop) + "{% elif " + value(in_loop) + " %}" +
                    block(depth, in_loop) + "{% else %}" + block(depth, in_loop) + "{% endif %}")
        if r < 0.84 and in_loop:
            return rng.choice(["{% break %}", "{% continue %}"])
        if r < 0.9:
            return "{% with x = " + value(in_loop) + " %}" + block(depth, in_loop) + "{% endwith %}"
        if r < 0.95:
            return "{% set a %}" + block(depth, False) + "{% endset %}"
        return "{% filter upper %}" + block(depth, in_loop) + "{% endfilter %}"

    def block(depth, in_loop):
        return "".join(statement(depth + 1, in_loop) for _ in range(rng.randint(1, 3)))
    head = ("{% set ns = namespace(x=0) %}{% macro m(p, q=2) %}<{{ p }}{{ q }}{{ a }}" + block(2, False) +
            ">{% endmacro %}{% macro m2() %}[{{ varargs }}{{ b }}]{% endmacro %}")
    return head + block(0, False) + "|{{ a }}|{{ b }}|{{ c }}|{{ ns.x }}", {"a": "A", "d": {"k1": 1, "k2": 2}}


GENERATORS = {"expressions": gen_expression_case, "whitespace": gen_whitespace_case, "scoping": gen_scope_case}


def known_difference(reference, template):
    output = reference.get("output", "")
    return " at 0x" in output or "%" in template


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--driver", required=True, help="path of the built jinja_render_tool")
    parser.add_argument("--kind", choices=sorted(GENERATORS) + ["all"], default="all")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-n", type=int, default=2000, help="cases per kind")
    parser.add_argument("--show", type=int, default=10, help="mismatches to print per kind")
    args = parser.parse_args()
    kinds = sorted(GENERATORS) if args.kind == "all" else [args.kind]
    total_bad = 0
    for kind in kinds:
        rng = random.Random(f"{kind}-{args.seed}")
        cases = [dict(zip(("template", "context"), GENERATORS[kind](rng))) for _ in range(args.n)]
        references = []
        for case in cases:
            try:
                references.append({"output": _compile_jinja_template(case["template"]).render(
                    **copy.deepcopy(case["context"]))})
            except Exception as error:  # noqa: BLE001 - any jinja2 failure is an expected error
                references.append({"error": f"{type(error).__name__}: {error}"})
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(cases, f)
            f.flush()
            run = subprocess.run([args.driver, f.name], capture_output=True, text=True, check=True)
        results = json.loads(run.stdout)
        bad = 0
        for case, reference, result in zip(cases, references, results):
            same = ("error" in reference) == ("error" in result) and reference.get("output") == result.get("output")
            if same or known_difference(reference, case["template"]):
                continue
            bad += 1
            if bad <= args.show:
                print(f"[{kind}] {case['template']!r}\n  jinja2: {reference}\n  lathe:  {result}")
        print(f"{kind}: {bad} mismatches in {len(cases)} cases")
        total_bad += bad
    sys.exit(1 if total_bad else 0)


if __name__ == "__main__":
    main()
