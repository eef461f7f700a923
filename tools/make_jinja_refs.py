#!/usr/bin/env python3
"""Writes tests/fixtures/chat/jinja_refs.json: small Jinja templates rendered by jinja2 exactly as
transformers renders chat templates, for the C++ interpreter test (tests/unit/chat).

The environment is transformers' own: transformers.utils.chat_template_utils._compile_jinja_template
builds an ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the loopcontrols
extension, its tojson (json.dumps, ensure_ascii=False), raise_exception, strftime_now, dict and a
namespace that rejects "_" names. Each case is {name, template, context, expected} or, when jinja2
raises, {name, template, context, error: true, error_type, error_message}.

Usage: python3 tools/make_jinja_refs.py [--out tests/fixtures/chat/jinja_refs.json]
"""
import argparse
import json
import os

import jinja2
import transformers
from transformers.utils.chat_template_utils import _compile_jinja_template

MESSAGES = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi there"},
    {"role": "assistant", "content": "Hello!", "tool_calls": [{"function": {"name": "f", "arguments": {"x": 1}}}]},
]

# (name, template, context). Names are unique; contexts are JSON.
CASES = [
    # --- whitespace control, trim_blocks, lstrip_blocks, comments, raw -------------------------
    ("ws_trim_blocks", "{% if true %}\nA\n{% endif %}\nB", {}),
    ("ws_lstrip_blocks", "  {% if true %}\n  X\n  {% endif %}\nY", {}),
    ("ws_lstrip_tab", "\t {% if true %}x{% endif %}\n", {}),
    ("ws_minus_both", "a  \n {%- if true -%}  \n B  \n {%- endif -%}  \n c", {}),
    ("ws_var_minus", "a  {{- 'x' -}}  b\n{{ 'y' -}}\n\n z", {}),
    ("ws_var_not_lstripped", "line\n    {{ 'v' }}\n", {}),
    ("ws_plus_keeps", "x\n    {%+ if true %}y{% endif %}", {}),
    ("ws_plus_end_keeps_newline", "{% if true +%}\nA{% endif %}", {}),
    ("ws_block_after_text_same_line", "ab {% if true %}c{% endif %}", {}),
    ("ws_block_after_var_same_line", "{{ 'a' }}  {% if true %}b{% endif %}", {}),
    ("ws_comment", "a {# note #} b", {}),
    ("ws_comment_line", "a\n    {# note #}\nb", {}),
    ("ws_comment_minus", "a   {#- note -#}   b", {}),
    ("ws_trailing_newline_dropped", "abc\n", {}),
    ("ws_two_trailing_newlines", "abc\n\n", {}),
    ("ws_crlf", "a\r\nb\rc{% if true %}\r\nd{% endif %}", {}),
    ("ws_raw", "{% raw %}{{ x }} {% if %}{% endraw %}!", {}),
    ("ws_raw_minus", "a {%- raw -%}  {{ y }}  {%- endraw -%} b", {}),
    ("ws_for_lines", "{% for i in [1, 2] %}\n  {{ i }}\n{% endfor %}\n", {}),
    ("ws_minus_var_start", "{{-1}}", {}),
    ("ws_unicode_space_strip", "a\u00a0\u3000{%- if true %}b{% endif %}", {}),
    ("ws_nested_indent", "{%- for m in messages %}\n    {%- if m.role == 'user' %}\n        {{- m.content }}\n    {%- endif %}\n{%- endfor %}", {"messages": MESSAGES}),
    # --- literals and printing ------------------------------------------------------------------
    ("lit_string_escapes", r"""{{ 'a\nb\tc\\d\'e' }}|{{ "q\"r" }}|{{ '\x41\u00e9\101' }}|{{ '\q\d' }}""", {}),
    ("lit_adjacent_strings", "{{ 'a' \"b\" 'c' }}", {}),
    ("lit_numbers", "{{ 42 }} {{ -7 }} {{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1_000 }} {{ 1.5 }} {{ 1e3 }} {{ 2.5E-3 }} {{ 1_0.2_5 }}", {}),
    ("lit_constants", "{{ true }} {{ True }} {{ false }} {{ False }} {{ none }} {{ None }}", {}),
    ("lit_list_repr", "{{ [1, 'a', none, true, 1.5, {'k': 'v'}, [2]] }}", {}),
    ("lit_tuple_repr", "{{ (1,) }} {{ (1, 'b') }} {{ () }} {{ 1, 2 }}", {}),
    ("lit_dict_repr", "{{ {'b': 1, 'a': [none]} }}", {}),
    ("lit_string_repr_quotes", "{{ [\"it's\", 'say \"hi\"', 'both \\' and \"', 'x\\ny', '\\x01\\x7f', 'caf\u00e9', '\u00a0\u200b'] }}", {}),
    ("lit_float_repr", "{{ [0.1 + 0.2, 1/3, 1e16, 1e15, 1e-5, 0.0001, 123456789.0, 1.5e300, -0.0, 2.0] }}", {}),
    ("print_context_types", "{{ s }}|{{ i }}|{{ f }}|{{ b }}|{{ n }}|{{ l }}|{{ d }}", {"s": "str", "i": 3, "f": 2.5, "b": False, "n": None, "l": [1, "x"], "d": {"k": None}}),
    ("print_unicode_context", "{{ s }}|{{ s|length }}|{{ s[1] }}|{{ s[::-1] }}", {"s": "h\u00e9llo \U0001F600!"}),
    # --- arithmetic -----------------------------------------------------------------------------
    ("math_int", "{{ 7 + 3 }} {{ 7 - 10 }} {{ 6 * 7 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 2 ** 10 }} {{ 2 ** -1 }}", {}),
    ("math_float", "{{ 1.5 + 2 }} {{ 7.5 // 2 }} {{ -7.5 // 2 }} {{ 7.5 % 2 }} {{ -7.5 % 2 }} {{ 2.0 ** 3 }} {{ 10 / 4 }} {{ 4 / 2 }}", {}),
    ("math_precedence", "{{ 2 + 3 * 4 }} {{ (2 + 3) * 4 }} {{ 2 ** 3 ** 2 }} {{ -2 ** 2 }} {{ 10 - 2 - 3 }} {{ 1 ~ 2 * 3 ~ 4 }}", {}),
    ("err_concat_binds_tighter_than_plus", "{{ 1 + 2 ~ 3 + 4 }}", {}),
    ("math_bool_as_int", "{{ true + 1 }} {{ true * 3 }} {{ false - 1 }}", {}),
    ("math_string_ops", "{{ 'ab' + 'cd' }} {{ 'ab' * 3 }} {{ 2 * 'x' }} {{ 'n' ~ 1 ~ none ~ true ~ 1.5 }}", {}),
    ("math_list_ops", "{{ [1] + [2, 3] }} {{ [0] * 3 }} {{ (1,) + (2,) }}", {}),
    ("math_unary", "{{ -x }} {{ +x }} {{ -(-3) }} {{ - 2.5 }} {{ -true }}", {"x": 4}),
    ("concat_undefined", "[{{ nope ~ 'a' }}]", {}),
    # --- comparisons and logic ------------------------------------------------------------------
    ("cmp_basic", "{{ 1 < 2 }} {{ 2 <= 2 }} {{ 3 > 4 }} {{ 3 >= 4 }} {{ 1 == 1.0 }} {{ 1 != 2 }} {{ 'a' < 'b' }} {{ 'B' < 'a' }}", {}),
    ("cmp_chained", "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 3 > 2 > 2 }} {{ 1 == 1 == 1 }}", {}),
    ("cmp_mixed_eq", "{{ 1 == '1' }} {{ none == none }} {{ none == false }} {{ 0 == false }} {{ [1, 2] == [1, 2] }} {{ {'a': 1} == {'a': 1} }} {{ (1, 2) == [1, 2] }}", {}),
    ("cmp_lists", "{{ [1, 2] < [1, 3] }} {{ [1, 2] < [1, 2, 0] }} {{ [2] > [1, 9] }}", {}),
    ("cmp_undefined_eq", "{{ nope == none }} {{ nope == nope2 }} {{ nope != 1 }}", {}),
    ("logic_values", "{{ 0 or 'x' }} {{ 'a' or 'b' }} {{ 'a' and 'b' }} {{ '' and 'b' }}|{{ none or [] }}|{{ not 0 }} {{ not 'a' }}", {}),
    ("logic_precedence", "{{ not true or true }} {{ not (true or true) }} {{ true or false and false }} {{ not 1 == 2 }}", {}),
    ("in_operator", "{{ 'b' in 'abc' }} {{ 'x' not in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'v' in {'k': 'v'} }} {{ 'a' in nope }} {{ 1 in [1.0] }}", {}),
    # --- tests ----------------------------------------------------------------------------------
    ("test_defined", "{{ x is defined }} {{ y is defined }} {{ y is undefined }} {{ x is not defined }} {{ d.k is defined }} {{ d.z is defined }}", {"x": None, "d": {"k": 1}}),
    ("test_types", "{% for v in [1, 1.5, 'a', none, true, [1], {'a': 1}] %}{{ v is number }}{{ v is integer }}{{ v is float }}{{ v is string }}{{ v is none }}{{ v is boolean }}{{ v is sequence }}{{ v is mapping }}{{ v is iterable }}{{ v is callable }};{% endfor %}", {}),
    ("test_undefined_types", "{{ u is sequence }}{{ u is iterable }}{{ u is mapping }}{{ u is string }}{{ u is none }}{{ u is number }}", {}),
    ("test_true_false", "{{ true is true }} {{ 1 is true }} {{ false is false }} {{ 0 is false }} {{ none is false }} {{ x is false }}", {"x": False}),
    ("test_numbers", "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 4.0 is even }}", {}),
    ("test_compare", "{{ 3 is eq 3 }} {{ 3 is equalto 4 }} {{ 3 is ne 4 }} {{ 3 is lt 4 }} {{ 3 is gt 4 }} {{ 3 is le 3 }} {{ 3 is ge 4 }} {{ 3 is greaterthan 2 }} {{ 3 is lessthan 2 }}", {}),
    ("test_in_case_sameas", "{{ 2 is in [1, 2] }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aB' is lower }} {{ none is sameas none }} {{ false is sameas false }} {{ 0 is sameas false }}", {}),
    ("test_filter_test_names", "{{ 'upper' is filter }} {{ 'nope' is filter }} {{ 'odd' is test }} {{ 'x' is escaped }} {{ ('x'|safe) is escaped }}", {}),
    ("test_chain_not", "{{ not x is defined }} {{ x is not none and x is string }}", {"x": "s"}),
    ("test_unknown_in_if_not_taken", "{% if false %}{{ x is nosuchtest }}{% endif %}ok", {}),
    ("filter_unknown_in_if_not_taken", "{% if false %}{{ x|nosuchfilter }}{% endif %}ok", {}),
    # --- conditionals ---------------------------------------------------------------------------
    ("if_elif_else", "{% for x in [1, 2, 3] %}{% if x == 1 %}one{% elif x == 2 %}two{% else %}many{% endif %},{% endfor %}", {}),
    ("if_truthiness", "{% for v in [0, 1, '', 'a', [], [0], {}, none, 0.0] %}{% if v %}T{% else %}F{% endif %}{% endfor %}", {}),
    ("ternary", "{{ 'y' if x else 'n' }} {{ 'y' if not x else 'n' }} [{{ 'only' if false }}] {{ 1 if false else 2 if true else 3 }}", {"x": 1}),
    ("if_set_leaks", "{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}", {}),
    # --- loops ----------------------------------------------------------------------------------
    ("for_loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.depth }};{% endfor %}", {}),
    ("for_prev_next_cycle", "{% for x in [1, 2, 3] %}[{{ loop.previtem }}|{{ loop.nextitem }}|{{ loop.cycle('a', 'b') }}]{% endfor %}", {}),
    ("for_previtem_defined", "{% for x in [1, 2] %}{{ loop.previtem is defined }}{{ loop.nextitem is defined }}{% endfor %}", {}),
    ("for_else", "{% for x in [] %}x{% else %}empty{% endfor %}|{% for x in [1] %}x{% else %}empty{% endfor %}", {}),
    ("for_filter", "{% for x in range(10) if x is odd %}{{ x }}{{ '' if loop.last else ',' }}{% endfor %}|{% for x in [1, 2] if x > 5 %}{% else %}none{% endfor %}", {}),
    ("for_unpack", "{% for a, b in [[1, 2], (3, 4), 'xy'] %}{{ a }}{{ b }};{% endfor %}", {}),
    ("for_dict", "{% for k in d %}{{ k }};{% endfor %}{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for v in d.values() %}{{ v }}{% endfor %}{% for k in d.keys() %}{{ k }}{% endfor %}", {"d": {"z": 1, "a": 2, "m": 3}}),
    ("for_nested_loop", "{% for x in [1, 2] %}{% for y in 'ab' %}{{ loop.index }}{{ x }}{{ y }} {% endfor %}{{ loop.index }}|{% endfor %}", {}),
    ("for_break_continue", "{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% endfor %}", {}),
    ("for_reverse_messages", "{% for m in messages[::-1] %}{{ m.role }}{{ loop.index0 }},{% endfor %}", {"messages": MESSAGES}),
    ("for_scope_no_leak", "{% set x = 0 %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{{ x }}{% endfor %}{{ x }}", {}),
    ("for_loop_var_after", "{% for i in [1, 2] %}{% endfor %}[{{ i }}][{{ loop }}]", {}),
    ("for_undefined_iterable", "{% for x in nope %}x{% else %}none{% endfor %}", {}),
    ("for_range", "{{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ range(5, 0, -2)|list }} {% for i in range(2) %}{{ i }}{% endfor %}", {}),
    ("namespace_basic", "{% set ns = namespace(a=1, b='x') %}{% for i in [1, 2, 3] %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }} {{ ns.b }} {{ ns.missing is defined }} {{ ns }}", {}),
    ("namespace_from_dict", "{% set ns = namespace({'k': 5}, j=6) %}{{ ns.k }}{{ ns.j }}", {}),
    # --- set ------------------------------------------------------------------------------------
    ("set_forms", "{% set a = 1 %}{% set b, c = 2, 3 %}{% set t = 4, 5 %}{% set (d, e) = [6, 7] %}{{ a }}{{ b }}{{ c }}{{ t }}{{ d }}{{ e }}", {}),
    ("set_block", "{% set x %}Hello {{ name }}!{% endset %}[{{ x }}]{% set y | upper %}abc{% endset %}{{ y }}", {"name": "Bo"}),
    ("set_shadows_context", "{{ v }}{% set v = 'local' %}{{ v }}", {"v": "ctx"}),
    # --- macros ---------------------------------------------------------------------------------
    ("macro_basic", "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}{{ greet('A') }} {{ greet('B', '?') }} {{ greet(punct='.', name='C') }} [{{ greet() }}]", {}),
    ("macro_reads_outer", "{% macro m() %}[{{ y }}]{% endmacro %}{% set y = 3 %}{{ m() }}{% set y = 4 %}{{ m() }}", {}),
    ("macro_no_dynamic_scope", "{% macro m() %}[{{ i }}]{% endmacro %}{% for i in [1, 2] %}{{ m() }}{% endfor %}", {}),
    ("macro_in_loop_closure", "{% for i in [1, 2] %}{% macro m() %}<{{ i }}>{% endmacro %}{{ m() }}{% endfor %}", {}),
    ("macro_local_set", "{% set x = 1 %}{% macro m(a) %}{% set x = a %}{{ x }}{% endmacro %}{{ m(5) }}{{ x }}", {}),
    ("macro_result_is_string", "{% macro m() %}  a  {% endmacro %}[{{ m()|trim }}]{{ m() is string }}{{ m()|length }}", {}),
    ("macro_varargs_kwargs", "{% macro m(a) %}{{ a }}{{ varargs }}{{ kwargs }}{% endmacro %}{{ m(1, 2, 3, k=4) }}", {}),
    ("macro_namespace_mutation", "{% set c = namespace(n=0) %}{% macro bump() %}{% set c.n = c.n + 1 %}{% endmacro %}{{ bump() }}{{ bump() }}{{ c.n }}", {}),
    ("macro_default_uses_arg", "{% macro m(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m('x') }}", {}),
    # --- other statements -----------------------------------------------------------------------
    ("with_block", "{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]", {}),
    ("filter_block", "{% filter upper %}abc {{ 'd' }}{% endfilter %}{% filter trim|upper %}  x  {% endfilter %}", {}),
    ("generation_block", "A{% generation %}B{{ 1 }}{% endgeneration %}C", {}),
    # --- attribute and item access --------------------------------------------------------------
    ("getattr_getitem", "{{ d.a }} {{ d['a'] }} {{ d.b.c }} {{ d['b']['c'] }} {{ l[0] }} {{ l[-1] }} {{ l.1 }} [{{ l[5] }}] [{{ d.zz }}] [{{ d['zz'] }}]", {"d": {"a": 1, "b": {"c": "x"}}, "l": [10, 20]}),
    ("getattr_dict_method_shadows_key", "{{ d['items'] }} {{ d.items is defined }} {{ d.get('items') }} {{ d.get('none', 'dflt') }} {{ d.get('none') }}", {"d": {"items": "key-value"}}),
    ("getattr_string_index", "{{ s[0] }}{{ s[-1] }}[{{ s[10] }}]", {"s": "hey"}),
    ("getattr_none_index", "[{{ n[0] }}][{{ n.x }}][{{ 5[0] }}]", {"n": None}),
    ("slicing", "{{ l[1:] }} {{ l[:2] }} {{ l[::2] }} {{ l[::-1] }} {{ l[-2:] }} {{ l[1:-1] }} {{ l[5:] }} {{ l[3:1] }} {{ l[3:1:-1] }} {{ l[:] }} {{ s[1:3] }} {{ s[::-1] }} {{ s[-3:] }} {{ (1, 2, 3)[1:] }}", {"l": [1, 2, 3, 4], "s": "h\u00e9llo"}),
    ("slice_with_vars", "{{ l[a:b] }} {{ l[:n] }} {{ l[n:] }}", {"l": [1, 2, 3, 4, 5], "a": 1, "b": 3, "n": 2}),
    ("messages_access", "{{ messages[0].role }}|{{ messages[-1].tool_calls[0].function.name }}|{{ messages[-1].tool_calls[0].function.arguments }}|{{ messages|length }}", {"messages": MESSAGES}),
    # --- string methods -------------------------------------------------------------------------
    ("str_methods_case", "{{ s.upper() }} {{ s.lower() }} {{ s.title() }} {{ s.capitalize() }} {{ 'hello world-foo'.title() }} {{ \"they're bill's\".title() }}", {"s": "hELLo wORLD"}),
    ("str_methods_strip", "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ 'xxaxx'.strip('x') }}][{{ '\\n\\nab\\n'.lstrip('\\n') }}][{{ 'ab\\n\\n'.rstrip('\\n') }}]", {"s": " \t pad \n "}),
    ("str_methods_split", "{{ 'a,b,,c'.split(',') }} {{ '  a  b  '.split() }} {{ 'a b c'.split(none, 1) }} {{ 'a,b,c'.split(',', 1) }} {{ 'a,b,c'.rsplit(',', 1) }} {{ '  a b  c '.rsplit(none, 1) }} {{ ''.split() }} {{ ''.split(',') }}", {}),
    ("str_methods_search", "{{ 'hello'.startswith('he') }} {{ 'hello'.endswith('lo') }} {{ 'hello'.startswith(('x', 'h')) }} {{ 'hello'.find('l') }} {{ 'hello'.rfind('l') }} {{ 'hello'.find('z') }} {{ 'hello'.count('l') }} {{ 'h\u00e9llo'.find('l') }}", {}),
    ("str_methods_replace_join", "{{ 'aaa'.replace('a', 'b') }} {{ 'aaa'.replace('a', 'b', 2) }} {{ 'ab'.replace('', '-') }} {{ '-'.join(['x', 'y', 'z']) }} {{ ', '.join(l) }}", {"l": ["p", "q"]}),
    ("str_methods_predicates", "{{ '123'.isdigit() }} {{ 'abc'.isalpha() }} {{ 'a1'.isalnum() }} {{ '  '.isspace() }} {{ 'ABC'.isupper() }} {{ 'abc'.islower() }} {{ ''.isdigit() }}", {}),
    ("str_methods_misc", "{{ 'a\\nb\\r\\nc'.splitlines() }} {{ 'prefix-x'.removeprefix('prefix-') }} {{ 'x.txt'.removesuffix('.txt') }}", {}),
    ("qwen_think_split", "{% set c = content.split('</think>')[-1].lstrip('\\n') %}{% set r = content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}[{{ r }}][{{ c }}]", {"content": "<think>\nreasoning here\n</think>\n\nThe answer."}),
    # --- dict/list methods ----------------------------------------------------------------------
    ("dict_methods", "{{ d.items() }} {{ d.keys() }} {{ d.values() }} {{ d.get('a') }} {{ d.copy() }} {{ d.items()|list }}", {"d": {"a": 1, "b": [2]}}),
    ("list_methods", "{{ l.count(2) }} {{ l.index(3) }} {{ l.copy() }}", {"l": [1, 2, 3, 2]}),
    # --- filters --------------------------------------------------------------------------------
    ("f_length_count", "{{ 'abc'|length }} {{ [1, 2]|count }} {{ {'a': 1}|length }} {{ nope|length }} {{ '\u00e9\U0001F600'|length }}", {}),
    ("f_default", "{{ nope|default('d') }} {{ none|default('d') }} {{ ''|default('d') }} {{ ''|default('d', true) }} {{ 0|default('d', boolean=true) }} [{{ nope|d }}] {{ x|default('d') }}", {"x": "set"}),
    ("f_trim", "[{{ '  a b  '|trim }}][{{ 'xxaxx'|trim('x') }}][{{ nope|trim }}][{{ 5|trim }}]", {}),
    ("f_join", "{{ [1, 2, 3]|join }} {{ [1, 2, 3]|join(', ') }} {{ ['a', none, true]|join('-') }} {{ users|join(', ', attribute='name') }} [{{ nope|join(',') }}]", {"users": [{"name": "x"}, {"name": "y"}]}),
    ("f_first_last", "{{ [1, 2, 3]|first }} {{ [1, 2, 3]|last }} {{ 'xyz'|first }} {{ 'xyz'|last }} [{{ []|first }}] {{ {'k': 1, 'j': 2}|first }}", {}),
    ("f_list_string", "{{ 'abc'|list }} {{ {'a': 1}|list }} {{ (1, 2)|list }} {{ 5|string }} {{ none|string }} {{ [1]|string }} [{{ nope|string }}] {{ nope|list }}", {}),
    ("f_case", "{{ 'Hello World'|upper }} {{ 'Hello World'|lower }} {{ 'hello wORLD-foo(bar)'|title }} {{ 'hELLO wORLD'|capitalize }}", {}),
    ("f_replace", "{{ 'a-b-c'|replace('-', '+') }} {{ 'a-b-c'|replace('-', '+', 1) }} {{ 12321|replace('2', 'x') }}", {}),
    ("f_int_float", "{{ '42'|int }} {{ ' 7 '|int }} {{ '3.9'|int }} {{ 3.9|int }} {{ -3.9|int }} {{ 'x'|int }} {{ 'x'|int(5) }} {{ '0x1A'|int(base=16) }} {{ '1_000'|int }} {{ true|int }} {{ none|int }} {{ '2.5'|float }} {{ 'x'|float }} {{ 3|float }} {{ '1e3'|float }}", {}),
    ("f_abs_round", "{{ -3|abs }} {{ (-3)|abs }} {{ -2.5|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }} {{ 2.1|round(0, 'ceil') }} {{ 2.9|round(0, 'floor') }} {{ 7|round }} {{ 1.23456|round(3) }}", {}),
    ("f_items", "{% for k, v in d|items %}{{ k }}:{{ v }},{% endfor %}{{ d|items|list }}{% for x in nope|items %}x{% endfor %}", {"d": {"b": 1, "a": 2}}),
    ("f_reverse", "{{ 'abc'|reverse }} {{ [1, 2, 3]|reverse|list }} {{ (1, 2)|reverse|list }} {{ [1, 2, 3]|reverse|join(',') }}", {}),
    ("f_map", "{{ users|map(attribute='name')|join(',') }} {{ users|map(attribute='age', default=0)|list }} {{ ['a', 'b']|map('upper')|list }} {{ ['1', '2']|map('int')|sum }} {{ users|map(attribute='info.city')|list }}", {"users": [{"name": "x", "age": 3, "info": {"city": "P"}}, {"name": "y", "info": {"city": "Q"}}]}),
    ("f_select_reject", "{{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('odd')|list }} {{ [0, 1, '', 'a']|select|list }} {{ [1, 5, 9]|select('gt', 4)|list }} {{ ['a', 'b']|select('in', ['b'])|list }}", {}),
    ("f_selectattr", "{{ messages|selectattr('role', 'equalto', 'user')|map(attribute='content')|list }} {{ messages|rejectattr('role', 'eq', 'system')|map(attribute='role')|join(',') }} {{ messages|selectattr('tool_calls')|list|length }} {{ messages|selectattr('tool_calls', 'defined')|map(attribute='role')|first }}", {"messages": MESSAGES}),
    ("f_generator_truthy", "{{ 'T' if [1]|select('gt', 5) else 'F' }} {% set g = [1, 2]|map('string') %}{{ g|join }}[{{ g|join }}]", {}),
    ("f_sort_unique", "{{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ users|sort(attribute='age')|map(attribute='name')|join }} {{ [1, 2, 1, 3]|unique|list }} {{ ['a', 'A', 'b']|unique|list }}", {"users": [{"name": "x", "age": 3}, {"name": "y", "age": 1}, {"name": "z", "age": 2}]}),
    ("f_min_max_sum", "{{ [3, 1, 2]|min }} {{ [3, 1, 2]|max }} {{ ['b', 'A']|min }} {{ [1, 2, 3]|sum }} {{ [1.5, 2]|sum }} {{ users|sum(attribute='age') }} {{ users|max(attribute='age') }} [{{ []|max }}]", {"users": [{"age": 3}, {"age": 5}]}),
    ("f_dictsort", "{{ d|dictsort }} {{ d|dictsort(reverse=true) }} {{ d|dictsort(by='value') }}", {"d": {"b": 2, "a": 3, "C": 1}}),
    ("f_escape_safe", "{{ '<a href=\"x\">&\\'</a>'|e }} {{ '<b>'|safe }} {{ ('<b>'|safe) + '<i>' }} {{ '<i>' + ('<b>'|safe) }} {{ ('<b>'|safe)|e }} {{ '<b>'|forceescape }}", {}),
    ("f_indent", "[{{ 'a\\nb\\n\\nc'|indent }}][{{ 'a\\nb'|indent(2, true) }}][{{ 'a\\n\\nb'|indent(2, blank=true) }}][{{ 'x\\ny'|indent('> ') }}]", {}),
    ("f_wordcount_attr", "{{ 'hello big, wide world_1!'|wordcount }} {{ d|attr('keys') is defined }} {{ d|attr('k') is defined }}", {"d": {"k": 1}}),
    ("f_tojson_basic", "{{ x|tojson }}", {"x": {"a": [1, 2.5, {"b": None}], "\u00e9": "\n\"\\ \u2028 \x7f \x01", "e": [], "f": {}, "g": 1.0, "h": True, "i": "\U0001F600"}}),
    ("f_tojson_indent", "{{ x|tojson(indent=2) }}|{{ x|tojson(indent=0) }}|{{ [1, [2, []]]|tojson(indent='\\t') }}", {"x": {"a": [1, {"b": None}], "c": {}, "d": "s"}}),
    ("f_tojson_options", "{{ x|tojson(ensure_ascii=true) }}|{{ x|tojson(sort_keys=true) }}|{{ x|tojson(separators=(',', ':')) }}", {"x": {"b": "\U0001F600\u00e9", "a": 1, "C": [1, 2]}}),
    ("f_tojson_scalars", "{{ 'str'|tojson }} {{ 1|tojson }} {{ 1.5|tojson }} {{ none|tojson }} {{ true|tojson }} {{ (1, 'a')|tojson }} {{ ('<b>'|safe)|tojson }} {{ 1e20|tojson }} {{ 0.1|tojson }}", {}),
    ("f_tojson_tools", "{% for tool in tools %}{{ tool|tojson }}\n{% endfor %}", {"tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather \u2600 in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}}, "required": ["city"]}}}]}),
    # --- globals --------------------------------------------------------------------------------
    ("global_dict", "{{ dict(a=1, b='x') }} {{ dict({'k': 1}, j=2) }}", {}),
    ("context_overrides_global", "{{ range }}", {"range": "mine"}),
    # --- constructs common chat templates combine ---------------------------------------------
    ("tpl_recursive_macro", """{%- macro ts(spec) -%}
    {%- if spec.type == "array" -%}
        {{- ts(spec['items']) + "[]" }}
    {%- elif spec.type == "object" and spec.properties -%}
        {{- "{" }}
        {%- for name, sub in spec.properties.items() -%}
            {{- name }}{% if name not in (spec.required or []) %}?{% endif %}: {{ ts(sub) }}
            {%- if not loop.last %}, {% endif -%}
        {%- endfor -%}
        {{- "}" }}
    {%- elif spec.type is string -%}
        {{- spec.type }}
    {%- else -%}
        {{- "any" }}
    {%- endif -%}
{%- endmacro -%}
type = {{ ts(schema) }};""", {"schema": {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "array", "items": {"type": "string"}},
        "b": {"type": "object", "properties": {"c": {"type": "integer"}, "d": {"type": "array", "items": {"type": "object"}}}},
        "e": {"type": ["string", "null"]}}}}),
    ("tpl_alternating_roles", """{{- bos_token }}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] | trim %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set system_message = '' %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {%- if loop.first and system_message %}
            {{- '[INST] ' + system_message + '\\n\\n' + message['content'] | trim + ' [/INST]' }}
        {%- else %}
            {{- '[INST] ' + message['content'] | trim + ' [/INST]' }}
        {%- endif %}
    {%- else %}
        {{- ' ' + message['content'] | trim + eos_token }}
    {%- endif %}
{%- endfor %}""", {"bos_token": "<s>", "eos_token": "</s>", "messages": [
        {"role": "system", "content": "  Sys  "}, {"role": "user", "content": " U1 "},
        {"role": "assistant", "content": "A1 "}, {"role": "user", "content": "U2"}]}),
    ("tpl_alternating_roles_error", """{%- for message in messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
{%- endfor %}""", {"messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]}),
    ("tpl_role_rename_and_content_list", """{%- for message in messages if message.role != 'system' %}
    {%- set role = "model" if message['role'] == 'assistant' else message['role'] %}
    {%- set content = message['content'] if message['content'] is string else message['content'][0]['text'] %}
    {{- '<start_of_turn>' + role + '\\n' + content | trim + '<end_of_turn>\\n' }}
    {%- if loop.last %}[{{ loop.index }}/{{ loop.length }}]{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}""", {"add_generation_prompt": True, "messages": [
        {"role": "system", "content": "ignored"}, {"role": "user", "content": [{"type": "text", "text": " list text "}]},
        {"role": "assistant", "content": "reply"}, {"role": "user", "content": "plain"}]}),
    ("tpl_namespace_flags", """{%- set ns = namespace(is_first=false, is_tool=false, is_output_first=true, system_prompt='') %}
{%- for message in messages %}
    {%- if message['role'] == 'system' %}
        {%- if ns.is_first %}{%- set ns.system_prompt = ns.system_prompt + '\\n\\n' + message['content'] %}
        {%- else %}{%- set ns.system_prompt = message['content'] %}{%- set ns.is_first = true %}{%- endif %}
    {%- endif %}
{%- endfor %}
{{- bos_token }}{{ ns.system_prompt }}
{%- for message in messages %}
    {%- if message['role'] == 'user' %}
        {%- set ns.is_tool = false -%}
        {{- '<｜User｜>' + message['content'] }}
    {%- endif %}
    {%- if message['role'] == 'assistant' and message['content'] is not none %}
        {%- set content = message['content'] %}
        {%- if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}
        {{- '<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>' }}
    {%- endif %}
    {%- if message['role'] == 'tool' %}
        {%- set ns.is_tool = true -%}
        {%- if ns.is_output_first %}
            {{- '<｜tool▁outputs▁begin｜>' + message['content'] }}{%- set ns.is_output_first = false %}
        {%- else %}
            {{- '\\n' + message['content'] }}
        {%- endif %}
    {%- endif %}
{%- endfor -%}
{% if ns.is_tool %}{{ '<｜tool▁outputs▁end｜>' }}{% endif %}
{%- if add_generation_prompt and not ns.is_tool %}{{ '<｜Assistant｜><think>\\n' }}{% endif %}""", {"bos_token": "<｜begin▁of▁sentence｜>", "add_generation_prompt": True, "messages": [
        {"role": "system", "content": "S1"}, {"role": "system", "content": "S2"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "<think>r</think>answer"}, {"role": "tool", "content": "t1"},
        {"role": "tool", "content": "t2"}]}),
    ("tpl_tools_json_indent", """{%- if tools is not none %}
    {{- "Environment: ipython\\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\\n\\n" }}
    {%- endfor %}
{%- endif %}
{%- for message in messages %}
    {%- if 'tool_calls' in message %}
        {%- set tool_call = message.tool_calls[0].function %}
        {{- '{"name": "' + tool_call.name + '", ' }}
        {{- '"parameters": ' }}
        {{- tool_call.arguments | tojson }}
        {{- "}" }}
        {%- for arg_name, arg_val in tool_call.arguments | items %}
            {{- " " + arg_name + '="' + arg_val + '"' }}
            {%- if not loop.last %},{% endif %}
        {%- endfor %}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
    {%- endif %}
{%- endfor %}""", {"tools": [{"type": "function", "function": {"name": "f", "description": "d\u00e9", "parameters": {"type": "object", "properties": {"x": {"type": "string"}}}}}],
                   "messages": [{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": {"x": "1", "y": "two"}}}]},
                                {"role": "tool", "content": {"result": [1, 2]}}, {"role": "ipython", "content": "plain"}]}),
    ("tpl_previtem_nextitem_roles", """{%- for m in messages %}
    {%- if m.role == 'tool' %}
        {%- if loop.previtem and loop.previtem.role != 'tool' %}<tools>{% endif %}
        {{- m.content }}
        {%- if not loop.last and loop.nextitem.role != 'tool' %}</tools>{% elif loop.last %}</tools>{% endif %}
    {%- else %}
        {{- '|' + m.role + '|' }}
    {%- endif %}
{%- endfor %}""", {"messages": [{"role": "user", "content": "u"}, {"role": "tool", "content": "a"}, {"role": "tool", "content": "b"},
                                 {"role": "assistant", "content": "x"}, {"role": "tool", "content": "c"}]}),
    ("tpl_selectattr_system", """{%- set system = messages | selectattr("role", "equalto", "system") | list %}
{%- if system | length > 0 %}SYSTEM: {{ system[0].content }}{% endif %}
{%- set convo = messages | rejectattr("role", "equalto", "system") | list %}
{%- for m in convo %} {{ m.role }}{% endfor %} ({{ convo | length }})""", {"messages": MESSAGES}),
    ("tpl_future_slice", """{%- for message in messages -%}
    {%- set later = namespace(found=false) -%}
    {%- for future in messages[loop.index:] -%}
        {%- if future.role == 'assistant' and 'tool_calls' not in future -%}{%- set later.found = true -%}{%- endif -%}
    {%- endfor -%}
    {{ message.role }}={{ later.found }};
{%- endfor -%}""", {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b", "tool_calls": []},
                                  {"role": "assistant", "content": "c"}, {"role": "user", "content": "d"}]}),
    ("tpl_defaults_and_kwargs", """{%- if model_identity is not defined %}{%- set model_identity = "Default identity." %}{%- endif %}
{{- model_identity }} | {{ reasoning_effort | default("medium") }} | {{ (builtin_tools or []) | join(",") }}
{%- if date_string is defined %} | {{ date_string }}{% endif %}""", {"reasoning_effort": "high", "builtin_tools": ["browser", "python"]}),
    ("tpl_number_formatting", "{{ n / 2 }} {{ n // 2 }} {{ (n * 1.0) }} {{ n ~ '' }} {{ 3.0 }} {{ 1e2 }} {{ big }} {{ neg }} {{ f }}", {"n": 7, "big": 12345678901234, "neg": -5, "f": 1.25e-7}),
    ("tpl_unicode_literals", "{% set s = '日本語テキスト👋' %}{{ s|length }} {{ s[2:4] }} {{ s|upper }} {{ 'ÉCOLE'|lower }} {{ 'straße'|title }} {{ s|tojson }} {{ s[::-1] }}", {}),
    # --- jinja2's compile-time scoping and loop-control quirks ----------------------------------
    ("scope_macro_sees_later_root_set", "{% macro m() %}[{{ a }}]{% endmacro %}{{ m() }}{% set a = 1 %}{{ m() }}", {"a": "ctx"}),
    ("scope_root_store_first_shadows_context", "{% macro m() %}[{{ a }}]{% endmacro %}{{ m() }}{% set a = a %}", {"a": "ctx"}),
    ("scope_set_block_reads_own_target", "{% set a %}<{{ a }}>{% endset %}{{ a }}|{% set b %}<{{ b }}>{% endset %}{{ b }}", {"b": "ctx"}),
    ("scope_store_in_if_keeps_context", "{% if false %}{% set a = 1 %}{% endif %}[{{ a }}]{% if x %}{% set c = 1 %}{% elif y %}{% set c = 2 %}{% else %}{% set c = 3 %}{% endif %}[{{ c }}]", {"a": "ctx", "c": "ctx-c"}),
    ("scope_loop_read_before_set_resolves", "{% for i in [1, 2] %}{{ a }}{% set a = i %}{{ a }}{% endfor %}|{{ a }}", {"a": "ctx"}),
    ("scope_loop_store_first_shadows_context", "{% for i in [1, 2] %}{% macro q() %}[{{ a }}]{% endmacro %}{{ q() }}{% set a = i %}{{ q() }}{% endfor %}", {"a": "ctx"}),
    ("scope_with_and_generation_are_scopes", "{% set x = 1 %}{% with y = 2 %}{% set x = 3 %}{{ x }}{{ y }}{% endwith %}{% generation %}{% set x = 4 %}{{ x }}{% endgeneration %}{{ x }}", {}),
    ("loop_else_after_break_in_first_iteration", "{% for i in [1, 2] %}{% break %}{% else %}else-ran{% endfor %}|{% for i in [1, 2] %}{{ i }}{% if i == 2 %}{% break %}{% endif %}{% else %}else-ran{% endfor %}", {}),
    ("loop_else_after_all_continue", "{% for i in [1, 2] %}{{ i }}{% continue %}{% else %}else-ran{% endfor %}|{% for i in [1, 2] %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% else %}else-ran{% endfor %}", {}),
    ("loop_else_continue_belongs_to_outer_loop", "{% for o in 'ab' %}{% for i in [] %}{% else %}{% continue %}{% endfor %}{{ o }}{% endfor %}!", {}),
    ("loop_break_inside_filter_and_set_blocks", "{% for i in [1, 2] %}{% filter upper %}x{{ i }}{% if i == 2 %}{% break %}{% endif %}{% endfilter %}{% endfor %}|{% set v = 'old' %}{% for i in [1] %}{% set v %}new{% continue %}{% endset %}{% endfor %}{{ v }}", {}),
    # --- errors (jinja2 raises; the C++ interpreter must raise too) -----------------------------
    ("err_raise_exception", "{{ raise_exception('Custom failure: ' ~ 3) }}", {}),
    ("err_raise_in_branch", "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with user') }}{% endif %}", {"messages": MESSAGES}),
    ("err_attr_of_undefined", "{{ nope.attr }}", {}),
    ("err_item_of_undefined", "{{ nope['x'] }}", {}),
    ("err_nested_missing", "{{ d.missing.deeper }}", {"d": {}}),
    ("err_call_undefined", "{{ nope() }}", {}),
    ("err_call_missing_method", "{{ l.startswith('a') }}", {"l": ["a"]}),
    ("err_add_undefined", "{{ nope + 'a' }}", {}),
    ("err_add_types", "{{ 1 + 'a' }}", {}),
    ("err_compare_types", "{{ 1 < 'a' }}", {}),
    ("err_compare_undefined", "{{ nope < 1 }}", {}),
    ("err_div_zero", "{{ 1 / 0 }}", {}),
    ("err_floordiv_zero", "{{ 1 // 0 }}", {}),
    ("err_tojson_undefined", "{{ nope|tojson }}", {}),
    ("err_items_of_list", "{{ [1, 2]|items|list }}", {}),
    ("err_unknown_filter", "{{ 1|nosuchfilter }}", {}),
    ("err_unknown_filter_in_loop", "{% for x in [] %}{{ x|nosuchfilter }}{% endfor %}", {}),
    ("err_unknown_filter_in_if_taken", "{% if true %}{{ x|nosuchfilter }}{% endif %}", {}),
    ("err_unknown_test", "{{ 1 is nosuchtest }}", {}),
    ("err_unknown_tag", "{% nosuchtag %}", {}),
    ("err_unclosed_if", "{% if true %}abc", {}),
    ("err_unclosed_for", "{% for x in [1] %}abc{% endif %}", {}),
    ("err_unclosed_var", "{{ 1 + }}", {}),
    ("err_unclosed_string", "{{ 'abc }}", {}),
    ("err_unclosed_comment", "a {# b", {}),
    ("err_bad_bracket", "{{ (1, 2] }}", {}),
    ("err_dict_pop_unsafe", "{{ d.pop('a') }}", {"d": {"a": 1}}),
    ("err_list_append_unsafe", "{{ l.append(1) }}", {"l": []}),
    ("err_namespace_underscore", "{% set ns = namespace(_x=1) %}", {}),
    ("err_namespace_set_underscore", "{% set ns = namespace() %}{% set ns._x = 1 %}", {}),
    ("err_set_attr_non_namespace", "{% set d.x = 1 %}", {"d": {}}),
    ("err_unpack_count", "{% set a, b = [1, 2, 3] %}", {}),
    ("err_macro_too_many_args", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}", {}),
    ("err_macro_bad_kwarg", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(b=1) }}", {}),
    ("err_not_iterable", "{% for x in 5 %}{% endfor %}", {}),
    ("err_none_iterable", "{% for x in n %}{% endfor %}", {"n": None}),
    ("err_len_of_int", "{{ 5|length }}", {}),
    ("err_len_of_generator", "{{ [1, 2]|select('odd')|length }}", {}),
    ("err_slice_step_zero", "{{ [1, 2][::0] }}", {}),
    ("err_in_string_int", "{{ 1 in 'abc' }}", {}),
    ("err_test_chain", "{{ 1 is odd is odd }}", {}),
    ("err_test_operator_name", "{{ 3 is == 3 }}", {}),
    ("err_test_then_if", "{{ x is defined if true else 1 }}", {}),
    ("err_break_outside_loop", "{% break %}", {}),
    ("err_include_unsupported", "{% include 'x.html' %}", {}),
    ("err_neg_string", "{{ -'a' }}", {}),
    ("err_range_too_big", "{{ range(200000)|length }}", {}),
    ("err_split_empty_sep", "{{ 'abc'.split('') }}", {}),
    ("err_last_of_generator", "{{ [1, 2]|select('odd')|last }}", {}),
]


def render_case(name, template, context):
    case = {"name": name, "template": template, "context": context}
    try:
        case["expected"] = _compile_jinja_template(template).render(**context)
    except Exception as error:  # jinja2 raised: the C++ interpreter must raise as well
        case["error"] = True
        case["error_type"] = type(error).__name__
        case["error_message"] = str(error)
    return case


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--out", default=os.path.join(root, "tests", "fixtures", "chat", "jinja_refs.json"))
    args = parser.parse_args()
    names = [name for name, _, _ in CASES]
    assert len(names) == len(set(names)), "duplicate case names"
    cases = [render_case(*case) for case in CASES]
    document = {
        "generator": "tools/make_jinja_refs.py",
        "jinja2_version": jinja2.__version__,
        "transformers_version": transformers.__version__,
        "environment": "transformers.utils.chat_template_utils._compile_jinja_template "
        "(ImmutableSandboxedEnvironment, trim_blocks=True, lstrip_blocks=True, loopcontrols)",
        "cases": cases,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, indent=1)
        f.write("\n")
    errors = sum(1 for c in cases if c.get("error"))
    print(f"wrote {len(cases)} cases ({errors} expected errors) to {args.out}")


if __name__ == "__main__":
    main()
