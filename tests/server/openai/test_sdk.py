"""The server driven by the official OpenAI Python SDK (tests/requirements.txt pins it)."""

import asyncio
import json
import random
import time

import openai
import pytest
from openai import AsyncOpenAI, OpenAI

from conftest import SERVED_NAME

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def test_models_list_and_retrieve(client, server):
    models = client.models.list()
    assert [m.id for m in models.data] == [SERVED_NAME]
    assert models.data[0].object == "model"
    assert client.models.retrieve(SERVED_NAME).id == SERVED_NAME
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("no-such-model")


def test_completion_text_prompt(client, server):
    prompt = "Hello, my name is"
    completion = client.completions.create(model=SERVED_NAME, prompt=prompt, max_tokens=8, temperature=0)
    assert completion.object == "text_completion"
    assert completion.id.startswith("cmpl-")
    assert completion.model == SERVED_NAME
    choice = completion.choices[0]
    assert isinstance(choice.text, str)
    assert choice.finish_reason in ("stop", "length")
    assert completion.usage.prompt_tokens == len(server.tokenize(prompt=prompt))
    assert 1 <= completion.usage.completion_tokens <= 8
    assert completion.usage.total_tokens == completion.usage.prompt_tokens + completion.usage.completion_tokens
    # Greedy decoding is reproducible request to request.
    again = client.completions.create(model=SERVED_NAME, prompt=prompt, max_tokens=8, temperature=0)
    assert again.choices[0].text == choice.text


def test_completion_token_id_prompt_matches_text_prompt(client, server):
    prompt = "The quick brown fox"
    ids = server.tokenize(prompt=prompt)
    by_text = client.completions.create(model=SERVED_NAME, prompt=prompt, max_tokens=6, temperature=0)
    by_ids = client.completions.create(model=SERVED_NAME, prompt=ids, max_tokens=6, temperature=0)
    assert by_ids.choices[0].text == by_text.choices[0].text
    assert by_ids.usage.prompt_tokens == len(ids)


def test_completion_length_and_ignore_eos(client):
    completion = client.completions.create(model=SERVED_NAME, prompt="abc", max_tokens=5, temperature=0,
                                           extra_body={"ignore_eos": True})
    assert completion.choices[0].finish_reason == "length"
    assert completion.usage.completion_tokens == 5


def test_chat_completion(client, server):
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello."}]
    chat = client.chat.completions.create(model=SERVED_NAME, messages=messages, max_tokens=12, temperature=0)
    assert chat.object == "chat.completion"
    assert chat.id.startswith("chatcmpl-")
    message = chat.choices[0].message
    assert message.role == "assistant"
    assert isinstance(message.content, str)
    assert chat.choices[0].finish_reason in ("stop", "length")
    # Prompt tokens are those of the rendered chat template (with the generation prompt).
    assert chat.usage.prompt_tokens == len(server.tokenize(messages=messages))
    assert 1 <= chat.usage.completion_tokens <= 12


def test_chat_enable_thinking_changes_the_prompt(server):
    messages = [{"role": "user", "content": "Think about it."}]
    plain = server.tokenize(messages=messages)
    no_think = server.tokenize(messages=messages, chat_template_kwargs={"enable_thinking": False})
    # Qwen3's template appends an empty <think></think> block when thinking is disabled.
    assert len(no_think) > len(plain)


def collect_stream(stream):
    chunks = list(stream)
    usage = [c for c in chunks if c.usage is not None]
    assert len(usage) == 1 and chunks[-1] is usage[0], "exactly one usage chunk, last"
    assert usage[0].choices == []
    return chunks[:-1], usage[0].usage


def test_completion_stream_with_usage(client, server):
    prompt = "Once upon a time"
    whole = client.completions.create(model=SERVED_NAME, prompt=prompt, max_tokens=10, temperature=0)
    stream = client.completions.create(model=SERVED_NAME, prompt=prompt, max_tokens=10, temperature=0, stream=True,
                                       stream_options={"include_usage": True})
    chunks, usage = collect_stream(stream)
    assert all(c.object == "text_completion" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert "".join(c.choices[0].text for c in chunks) == whole.choices[0].text
    assert [c.choices[0].finish_reason for c in chunks][-1] == whole.choices[0].finish_reason
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])
    assert usage.prompt_tokens == whole.usage.prompt_tokens
    assert usage.completion_tokens == whole.usage.completion_tokens


def test_completion_stream_without_usage(client):
    chunks = list(client.completions.create(model=SERVED_NAME, prompt="abc", max_tokens=4, temperature=0, stream=True))
    assert chunks and all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason in ("stop", "length")


def test_chat_stream_with_usage(client):
    messages = [{"role": "user", "content": "Tell me a story."}]
    whole = client.chat.completions.create(model=SERVED_NAME, messages=messages, max_tokens=10, temperature=0)
    stream = client.chat.completions.create(model=SERVED_NAME, messages=messages, max_tokens=10, temperature=0,
                                            stream=True, stream_options={"include_usage": True})
    chunks, usage = collect_stream(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    content = "".join(c.choices[0].delta.content or "" for c in chunks)
    reasoning = "".join(getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks)
    whole_message = whole.choices[0].message
    assert content == (whole_message.content or "")
    assert reasoning == (getattr(whole_message, "reasoning_content", None) or "")
    assert chunks[-1].choices[0].finish_reason == whole.choices[0].finish_reason
    assert usage.completion_tokens == whole.usage.completion_tokens
    assert usage.prompt_tokens == whole.usage.prompt_tokens


def check_assistant_message(choice):
    """The response shape, whatever the tiny model's greedy output happens to be."""
    assert choice.finish_reason in ("stop", "length", "tool_calls")
    message = choice.message
    assert message.role == "assistant"
    if choice.finish_reason == "tool_calls":
        assert message.tool_calls
    for call in message.tool_calls or []:
        assert call.type == "function" and call.id.startswith("call_")
        assert isinstance(json.loads(call.function.arguments), dict)
    if not message.tool_calls:
        assert isinstance(message.content, str)


def test_tools_round_trip(client, server):
    messages = [{"role": "user", "content": "What is the weather in Paris?"}]
    # The tool definitions reach the prompt through the chat template.
    assert len(server.tokenize(messages=messages, tools=[WEATHER_TOOL])) > len(server.tokenize(messages=messages)) + 50
    first = client.chat.completions.create(model=SERVED_NAME, messages=messages, tools=[WEATHER_TOOL],
                                           tool_choice="auto", max_tokens=16, temperature=0)
    check_assistant_message(first.choices[0])
    # Send a tool call and its result back, as a client does after running the tool.
    call_id = "call_0123456789abcdef01234567"
    messages += [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": call_id, "content": '{"temperature_c": 21, "sky": "clear"}'},
    ]
    rendered = server.post_json("/tokenize", {"messages": messages, "tools": [WEATHER_TOOL]})
    assert rendered[0] == 200
    second = client.chat.completions.create(model=SERVED_NAME, messages=messages, tools=[WEATHER_TOOL],
                                            max_tokens=16, temperature=0)
    check_assistant_message(second.choices[0])
    assert second.usage.prompt_tokens == rendered[1]["count"]
    streamed = client.chat.completions.create(model=SERVED_NAME, messages=messages, tools=[WEATHER_TOOL],
                                              max_tokens=16, temperature=0, stream=True)
    chunks = list(streamed)
    assert chunks[-1].choices[0].finish_reason == second.choices[0].finish_reason
    # tool_choice naming a function that is not offered is refused.
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=SERVED_NAME, messages=messages[:1], tools=[WEATHER_TOOL], max_tokens=4,
                                       tool_choice={"type": "function", "function": {"name": "nope"}})


def test_sdk_errors(client, server):
    with pytest.raises(openai.BadRequestError) as error:
        client.completions.create(model=SERVED_NAME, prompt="x", max_tokens=0)
    assert error.value.status_code == 400 and error.value.body["param"] == "max_tokens"
    with pytest.raises(openai.BadRequestError) as error:
        client.completions.create(model=SERVED_NAME, prompt="x", temperature=-1)
    assert error.value.body["param"] == "temperature"
    with pytest.raises(openai.BadRequestError) as error:
        client.completions.create(model=SERVED_NAME, prompt="x", n=2)
    assert error.value.body["param"] == "n"
    with pytest.raises(openai.BadRequestError):
        client.completions.create(model=SERVED_NAME, prompt="x", logprobs=2)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=SERVED_NAME, messages=[])
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=SERVED_NAME, messages=[{"role": "wizard", "content": "x"}])
    with pytest.raises(openai.NotFoundError) as error:
        client.completions.create(model="gpt-4", prompt="x")
    assert error.value.body["code"] == "model_not_found"
    # A prompt longer than max-model-len: 400 naming both lengths.
    long_prompt = "hello world " * 2500
    length = len(server.tokenize(prompt=long_prompt))
    assert length > server.max_model_len
    with pytest.raises(openai.BadRequestError) as error:
        client.completions.create(model=SERVED_NAME, prompt=long_prompt, max_tokens=4)
    assert str(length) in error.value.message and str(server.max_model_len) in error.value.message
    with pytest.raises(openai.BadRequestError) as error:
        client.completions.create(model=SERVED_NAME, prompt="x", max_tokens=server.max_model_len)
    assert error.value.body["param"] == "max_tokens"
    # The server is still healthy after all of that.
    assert client.completions.create(model=SERVED_NAME, prompt="ok", max_tokens=2).usage.completion_tokens >= 1


def test_auth(auth_server):
    good = OpenAI(base_url=auth_server.url("/v1"), api_key="sekrit-key", max_retries=0)
    assert good.models.list().data[0].id == SERVED_NAME
    assert good.completions.create(model=SERVED_NAME, prompt="x", max_tokens=2).usage.completion_tokens >= 1
    bad = OpenAI(base_url=auth_server.url("/v1"), api_key="wrong-key", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as error:
        bad.completions.create(model=SERVED_NAME, prompt="x", max_tokens=2)
    assert error.value.status_code == 401


async def one_stream(client: AsyncOpenAI, server, index: int, rng: random.Random):
    prompt = " ".join(rng.choice(["alpha", "beta", "gamma", "delta", "x", "y"]) for _ in range(rng.randint(1, 30)))
    max_tokens = rng.randint(1, 40)
    stream = await client.completions.create(
        model=SERVED_NAME, prompt=prompt, max_tokens=max_tokens, temperature=0.7, seed=index, stream=True,
        stream_options={"include_usage": True}, extra_body={"return_token_ids": True})
    streamed_ids = []
    text = ""
    finish = None
    usage = None
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
            continue
        choice = chunk.choices[0]
        streamed_ids += choice.model_extra["token_ids"]
        text += choice.text
        finish = choice.finish_reason or finish
    return prompt, max_tokens, streamed_ids, text, finish, usage


def test_64_concurrent_streams_with_exact_usage(server):
    async def run_all():
        # The SDK's default pool allows 1000 connections: all 64 streams run at once.
        client = AsyncOpenAI(base_url=server.url("/v1"), api_key="unused", max_retries=0, timeout=120)
        rng = random.Random(1234)
        try:
            return await asyncio.gather(*(one_stream(client, server, i, rng) for i in range(64)))
        finally:
            await client.close()

    results = asyncio.run(run_all())
    assert len(results) == 64
    for prompt, max_tokens, streamed_ids, text, finish, usage in results:
        assert usage is not None
        assert usage.prompt_tokens == len(server.tokenize(prompt=prompt))
        assert usage.completion_tokens == len(streamed_ids)
        assert 1 <= usage.completion_tokens <= max_tokens
        assert finish in ("stop", "length")
        if finish == "length":
            assert usage.completion_tokens == max_tokens
    samples = server.wait_idle()
    assert samples["lathe_kv_blocks_used"] == 0


def test_client_disconnect_mid_stream_cancels(server):
    before = server.metrics()
    client = OpenAI(base_url=server.url("/v1"), api_key="unused", max_retries=0, timeout=60)
    for _ in range(4):
        stream = client.completions.create(model=SERVED_NAME, prompt="Count with me: one two three", max_tokens=4000,
                                           temperature=0, stream=True, extra_body={"ignore_eos": True})
        for index, _chunk in enumerate(stream):
            if index == 2:
                break
        stream.close()  # drops the connection mid-stream
    samples = server.wait_idle(timeout=10)
    assert samples["lathe_kv_blocks_used"] == 0
    assert samples["lathe_num_requests_running"] == 0
    cancelled = 'lathe_requests_finished_total{finish_reason="cancelled"}'
    assert samples[cancelled] - before[cancelled] == 4
    # The cancelled requests generated far fewer than the 4000 tokens they asked for.
    generated = samples["lathe_generation_tokens_total"] - before["lathe_generation_tokens_total"]
    assert generated < 4 * 4000


def test_zz_after_everything_kv_blocks_back_to_zero(server):
    """Runs last in this module: nothing leaked across all the tests above."""
    samples = server.wait_idle()
    assert samples["lathe_kv_blocks_used"] == 0
    assert samples["lathe_num_requests_running"] == 0
    assert samples["lathe_num_requests_waiting"] == 0
    assert samples["lathe_kv_blocks_total"] > 0
    assert samples['lathe_http_requests_total{route="/v1/completions",status="200"}'] > 64
