#!/usr/bin/env python3
"""Writes the chat template references of tests/unit/chat: conversations rendered by transformers'
tokenizer.apply_chat_template(..., tokenize=False).

  tests/fixtures/chat/qwen3_chat_refs.json    the Qwen3 template of shared/tokenizers/qwen3
  tests/fixtures/chat/qwen3_5_chat_refs.json  the Qwen3.5 template in
                                              tests/fixtures/chat/qwen3_5_chat_template.jinja
                                              (rendered through the Qwen3 tokenizer with
                                              chat_template=...; Qwen3.5 uses the same special
                                              tokens, and its template reads none of them)

Each case is {name, request, expected} or {name, request, error: true, error_type, error_message};
`request` has exactly the shape `lathe chat-template DIR` reads on stdin: {"messages", "tools"?,
"add_generation_prompt", "enable_thinking"?} (enable_thinking absent = the kwarg not passed).

Usage: python3 tools/make_chat_refs.py [--tokenizer-dir ../shared/tokenizers/qwen3]
No network: the tokenizer loads from the local directory (HF_HUB_OFFLINE=1).
"""
import argparse
import json
import os
import shutil
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import transformers  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "chat")

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Paris"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Recherche sur le web — renvoie des résultats ✓",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "max_results": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
                "filters": {
                    "type": "object",
                    "properties": {"site": {"type": "string"}, "recent": {"type": "boolean"}},
                },
            },
            "required": ["query"],
        },
    },
}
SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


def user(text):
    return {"role": "user", "content": text}


def assistant(text, **extra):
    return {"role": "assistant", "content": text, **extra}


def call(name, arguments, wrap=True, call_id=None):
    inner = {"name": name, "arguments": arguments}
    out = {"type": "function", "function": inner} if wrap else inner
    if call_id:
        out["id"] = call_id
    return out


def tool(text, call_id=None):
    out = {"role": "tool", "content": text}
    if call_id:
        out["tool_call_id"] = call_id
    return out


def req(messages, tools=None, gen=True, thinking="unset"):
    r = {"messages": messages, "add_generation_prompt": gen}
    if tools is not None:
        r["tools"] = tools
    if thinking != "unset":
        r["enable_thinking"] = thinking
    return r


QWEN3_CASES = [
    ("user_only_gen", req([user("Hello!")])),
    ("user_only_gen_thinking_false", req([user("Hello!")], thinking=False)),
    ("user_only_gen_thinking_true", req([user("Hello!")], thinking=True)),
    ("user_only_no_gen", req([user("Hello!")], gen=False)),
    ("system_user_gen", req([SYSTEM, user("What is 2+2?")])),
    ("system_user_no_gen_thinking_false", req([SYSTEM, user("What is 2+2?")], gen=False, thinking=False)),
    ("multi_turn", req([SYSTEM, user("Hi"), assistant("Hello! How can I help?"), user("Tell me a joke.")])),
    ("multi_turn_thinking_false", req([user("Hi"), assistant("Hello!"), user("Bye")], thinking=False)),
    ("history_think_stripped", req([
        user("2+2?"), assistant("<think>\nAdd them.\n</think>\n\n4"), user("3+3?")])),
    ("final_assistant_with_think_tags", req([
        user("2+2?"), assistant("<think>\nSimple addition.\n</think>\n\nThe answer is 4.")], gen=False)),
    ("final_assistant_reasoning_content", req([
        user("Capital of France?"), assistant("Paris.", reasoning_content="The user asks about France.\n")], gen=False)),
    ("history_reasoning_content_dropped", req([
        user("A?"), assistant("B.", reasoning_content="thinking about A"), user("C?")])),
    ("assistant_after_last_query_no_reasoning", req([
        user("Q"), assistant("first answer"), assistant("second answer")], gen=False)),
    ("thinking_field_alias", req([user("Q"), assistant("Answer.", thinking="via the thinking field")], gen=False)),
    ("reasoning_null_uses_think_tags", req([
        user("Q"), assistant("<think>inline</think>Answer", reasoning_content=None)], gen=False)),
    ("tools_with_system", req([SYSTEM, user("Weather in Paris?")], tools=[WEATHER_TOOL])),
    ("tools_without_system", req([user("Weather in Paris?")], tools=[WEATHER_TOOL, SEARCH_TOOL])),
    ("tools_empty_list", req([user("Hi")], tools=[])),
    ("tool_call_dict_arguments", req([
        user("Weather in Paris?"),
        assistant("", tool_calls=[call("get_weather", {"city": "Paris", "unit": "celsius"}, call_id="c1")]),
        tool('{"temp": 21, "sky": "clear"}', "c1")], tools=[WEATHER_TOOL])),
    ("tool_call_string_arguments", req([
        user("Weather in Paris?"),
        assistant("", tool_calls=[call("get_weather", '{"city": "Paris"}')]),
        tool("21C")], tools=[WEATHER_TOOL])),
    ("tool_call_with_text_content", req([
        user("Weather in Paris and Rome?"),
        assistant("Let me check both cities.", tool_calls=[
            call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Rome"})]),
        tool("Paris: 21C"), tool("Rome: 25C"), tool("(extra note)")], tools=[WEATHER_TOOL])),
    ("tool_call_unwrapped_function", req([
        user("Search cats"), assistant("", tool_calls=[call("search", {"query": "cats"}, wrap=False)]),
        tool("many cats")], tools=[SEARCH_TOOL], gen=False)),
    ("multi_step_tools", req([
        SYSTEM, user("Plan a trip to Rome."),
        assistant("<think>\nNeed weather first.\n</think>\n\n", tool_calls=[call("get_weather", {"city": "Rome"})]),
        tool("25C, sunny"),
        assistant("", tool_calls=[call("search", {"query": "Rome museums", "max_results": 2,
                                                  "filters": {"recent": True}})]),
        tool("Vatican Museums; Galleria Borghese"),
        assistant("Rome will be sunny; visit the Vatican Museums.")], tools=[WEATHER_TOOL, SEARCH_TOOL], gen=False)),
    ("multi_step_tools_then_gen", req([
        user("Weather?"), assistant("", tool_calls=[call("get_weather", {"city": "Oslo"})]), tool("-3C")],
        tools=[WEATHER_TOOL], thinking=False)),
    ("user_tool_response_text_counts_as_tool", req([
        user("Real question"), assistant("calling", tool_calls=[call("search", {"query": "x"})]),
        user("<tool_response>\nresult\n</tool_response>")], tools=[SEARCH_TOOL])),
    ("unicode_content", req([
        {"role": "system", "content": "Réponds en français. 日本語も可。"},
        user("Ünïcödé — 你好, мир! 👋🏽 \u2028 tab\tend"),
        assistant("Bonjour ! 😀", tool_calls=[call("search", {"query": "café ☕", "filters": {"site": "例え.jp"}})]),
        tool("résultat: « ok »")], tools=[SEARCH_TOOL])),
    ("empty_content", req([user(""), assistant(""), user("")])),
    ("system_not_first", req([user("Hi"), {"role": "system", "content": "Late system note."}, user("Again")])),
    ("extra_message_keys_ignored", req([
        {"role": "user", "content": "Hi", "name": "alice", "metadata": {"k": 1}}], thinking=True)),
    ("long_conversation", req([SYSTEM] + [m for i in range(6) for m in (
        user(f"Question {i}?"), assistant(f"<think>\nstep {i}\n</think>\n\nAnswer {i}."))] + [user("Last?")])),
    ("assistant_content_null_with_tool_calls", req([
        user("Weather?"), assistant(None, tool_calls=[call("get_weather", {"city": "Paris"})]), tool("sunny")],
        tools=[WEATHER_TOOL])),
]

QWEN3_5_CASES = [
    ("user_only_gen", req([user("Hello!")])),
    ("user_only_gen_thinking_false", req([user("Hello!")], thinking=False)),
    ("system_user_no_gen", req([SYSTEM, user("Hi")], gen=False)),
    ("multi_turn_history_think", req([
        user("2+2?"), assistant("<think>\nadd\n</think>\n\n4"), user("3+3?")], thinking=True)),
    ("final_assistant_reasoning", req([
        user("Q"), assistant("A.", reasoning_content="  reasoning with spaces  ")], gen=False)),
    ("tools_and_calls", req([
        SYSTEM, user("Weather in Paris and Rome?"),
        assistant("Checking.", tool_calls=[call("get_weather", {"city": "Paris", "unit": "celsius"}),
                                           call("search", {"query": "Rome", "max_results": 3,
                                                           "filters": {"recent": True, "site": "x.it"},
                                                           "tags": ["a", "b"], "ratio": 0.5, "flag": False,
                                                           "none": None})]),
        tool("21C"), tool("Rome results"),
        assistant("Paris is 21C.")], tools=[WEATHER_TOOL, SEARCH_TOOL], gen=False)),
    ("tool_call_empty_content", req([
        user("Weather?"), assistant("", tool_calls=[call("get_weather", {"city": "Oslo"})]), tool("-3C")],
        tools=[WEATHER_TOOL])),
    ("tool_call_content_null", req([
        user("Weather?"), assistant(None, tool_calls=[call("get_weather", {"city": "Oslo"})]), tool("-3C")],
        tools=[WEATHER_TOOL])),
    ("multimodal_content_list", req([
        {"role": "user", "content": [{"type": "text", "text": "Describe "}, {"type": "image", "image": "x.png"},
                                     {"type": "text", "text": " please."}]}])),
    ("unicode", req([user("你好 👋 — ünïcödé"), assistant("Bonjour !"), user("Merci")], thinking=False)),
    ("error_string_arguments", req([
        user("Weather?"), assistant("", tool_calls=[call("get_weather", '{"city": "Oslo"}')]), tool("-3C")],
        tools=[WEATHER_TOOL])),
    ("error_no_user_query", req([SYSTEM, assistant("Hi")])),
    ("error_system_not_first", req([user("Hi"), {"role": "system", "content": "late"}])),
    ("error_unknown_role", req([user("Hi"), {"role": "narrator", "content": "x"}])),
]

# transformers' input preparation (null keys dropped, reasoning aliased, special tokens and
# documents/tools variables visible), rendered through small probe templates.
PREPARATION_TEMPLATE = (
    "{% for m in messages %}{{ m|tojson }}\n{% endfor %}"
    "bos={{ bos_token is defined }} eos={{ eos_token }} pad={{ pad_token }} unk={{ unk_token is defined }} "
    "documents={{ documents }} tools={{ tools|tojson }} gen={{ add_generation_prompt }} "
    "thinking={{ enable_thinking if enable_thinking is defined else 'undefined' }}")
PREPARATION_CASES = [
    ("null_keys_dropped", req([{"role": "user", "content": "q", "name": None},
                               {"role": "assistant", "content": None, "tool_calls": [call("f", {"a": None})]}])),
    ("reasoning_aliases", req([
        user("q"),
        assistant("a", reasoning="r1"),
        {"role": "assistant", "reasoning_content": "r2", "content": "b", "thinking": "t"},
        {"role": "assistant", "content": "c", "thinking": "t2", "reasoning_content": None},
    ], gen=False, thinking=True)),
    ("tools_and_thinking_false", req([user("q")], tools=[WEATHER_TOOL], thinking=False)),
]


def render(tokenizer, request, chat_template=None):
    kwargs = {}
    if "enable_thinking" in request:
        kwargs["enable_thinking"] = request["enable_thinking"]
    if chat_template is not None:
        kwargs["chat_template"] = chat_template
    return tokenizer.apply_chat_template(
        request["messages"], tools=request.get("tools"), add_generation_prompt=request["add_generation_prompt"],
        tokenize=False, **kwargs)


def build_cases(tokenizer, cases, chat_template=None):
    out = []
    for name, request in cases:
        case = {"name": name, "request": request}
        try:
            case["expected"] = render(tokenizer, json.loads(json.dumps(request)), chat_template)
        except Exception as error:  # the template (or transformers) raised: lathe must raise too
            case["error"] = True
            case["error_type"] = type(error).__name__
            case["error_message"] = str(error)
        out.append(case)
    return out


def write(path, document):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f, ensure_ascii=False, indent=1)
        f.write("\n")
    cases = document["cases"]
    print(f"wrote {len(cases)} cases ({sum(1 for c in cases if c.get('error'))} errors) to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokenizer-dir", default=os.path.join(ROOT, "..", "shared", "tokenizers", "qwen3"))
    args = parser.parse_args()
    names = [n for n, _ in QWEN3_CASES] + [n for n, _ in QWEN3_5_CASES]
    assert len(set(n for n, _ in QWEN3_CASES)) == len(QWEN3_CASES)
    assert len(set(n for n, _ in QWEN3_5_CASES)) == len(QWEN3_5_CASES)
    assert names
    with tempfile.TemporaryDirectory() as tmp:
        for file in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(os.path.join(args.tokenizer_dir, file), tmp)
        tokenizer = AutoTokenizer.from_pretrained(tmp)
        special_tokens = {k: v for k, v in tokenizer.special_tokens_map.items() if isinstance(v, str)}
        common = {"generator": "tools/make_chat_refs.py", "transformers_version": transformers.__version__,
                  "special_tokens": special_tokens}
        with open(os.path.join(args.tokenizer_dir, "tokenizer_config.json"), encoding="utf-8") as f:
            qwen3_template = json.load(f)["chat_template"]
        write(os.path.join(FIXTURES, "qwen3_chat_refs.json"), {
            **common, "tokenizer": "shared/tokenizers/qwen3", "chat_template": qwen3_template,
            "cases": build_cases(tokenizer, QWEN3_CASES)})
        with open(os.path.join(FIXTURES, "qwen3_5_chat_template.jinja"), encoding="utf-8") as f:
            qwen3_5_template = f.read()
        write(os.path.join(FIXTURES, "qwen3_5_chat_refs.json"), {
            **common, "tokenizer": "shared/tokenizers/qwen3 (special tokens) with the Qwen3.5 template",
            "chat_template_file": "tests/fixtures/chat/qwen3_5_chat_template.jinja",
            "cases": build_cases(tokenizer, QWEN3_5_CASES, qwen3_5_template)})

        write(os.path.join(FIXTURES, "preparation_refs.json"), {
            **common, "tokenizer": "shared/tokenizers/qwen3", "chat_template": PREPARATION_TEMPLATE,
            "cases": build_cases(tokenizer, PREPARATION_CASES, PREPARATION_TEMPLATE)})


if __name__ == "__main__":
    main()
