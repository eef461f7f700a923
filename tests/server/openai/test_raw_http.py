"""Raw HTTP against the server: malformed and hostile input, checked status by status.

Every error must be OpenAI's shape: {"error": {"message": str, "type": str, "param": str|null,
"code": str|null}}, and the server must keep serving afterwards.
"""

import http.client
import json
import socket
import threading
import time

import pytest

from conftest import SERVED_NAME


def request(server, method, path, body=None, headers=None, raw: bytes | None = None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    connection.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, payload, response


def check_error(status, payload, expected_status, param=None):
    assert status == expected_status, payload
    body = json.loads(payload)
    assert set(body) == {"error"}, body
    error = body["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["type"], str)
    assert error["param"] is None or isinstance(error["param"], str)
    assert error["code"] is None or isinstance(error["code"], str)
    if param is not None:
        assert error["param"] == param, error
    return error


def still_serving(server):
    status, payload, _ = request(server, "POST", "/v1/completions", {"prompt": "ok", "max_tokens": 2})
    assert status == 200, payload
    assert json.loads(payload)["usage"]["completion_tokens"] >= 1


@pytest.mark.parametrize("raw", [b"", b"{", b"not json", b'{"prompt": "x",}', b"[1, 2]", b'"a string"', b"null"])
def test_malformed_json_is_400(server, raw):
    status, payload, _ = request(server, "POST", "/v1/completions", raw=raw)
    check_error(status, payload, 400)


@pytest.mark.parametrize("path,body,param", [
    ("/v1/completions", {"prompt": 5}, "prompt"),
    ("/v1/completions", {"prompt": {"a": 1}}, "prompt"),
    ("/v1/completions", {"prompt": "x", "max_tokens": "5"}, "max_tokens"),
    ("/v1/completions", {"prompt": "x", "max_tokens": 2.5}, "max_tokens"),
    ("/v1/completions", {"prompt": "x", "max_tokens": -1}, "max_tokens"),
    ("/v1/completions", {"prompt": "x", "max_tokens": 2**63 - 1}, "max_tokens"),
    ("/v1/completions", {"prompt": "x", "max_tokens": 2**64}, "max_tokens"),
    ("/v1/completions", {"prompt": "x", "temperature": "hot"}, "temperature"),
    ("/v1/completions", {"prompt": "x", "top_p": 1.5}, "top_p"),
    ("/v1/completions", {"prompt": "x", "top_k": -2}, "top_k"),
    ("/v1/completions", {"prompt": "x", "min_p": 2}, "min_p"),
    ("/v1/completions", {"prompt": "x", "seed": "s"}, "seed"),
    ("/v1/completions", {"prompt": "x", "stop": [1]}, "stop"),
    ("/v1/completions", {"prompt": "x", "stream": "yes"}, "stream"),
    ("/v1/completions", {"prompt": "x", "stream_options": []}, "stream_options"),
    ("/v1/completions", {"prompt": "x", "model": 7}, "model"),
    ("/v1/completions", {"prompt": [1, -5]}, "prompt"),
    ("/v1/completions", {"prompt": [1, "a"]}, "prompt"),
    ("/v1/completions", {"max_tokens": 3}, "prompt"),
    ("/v1/chat/completions", {"messages": "hi"}, "messages"),
    ("/v1/chat/completions", {"messages": [{"content": "no role"}]}, "messages"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": 5}]}, "messages"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "tools": {}}, "tools"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "tool_choice": "sometimes"}, "tool_choice"),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}], "chat_template_kwargs": 1},
     "chat_template_kwargs"),
    ("/tokenize", {"prompt": 5}, "prompt"),
    ("/tokenize", {}, "prompt"),
    ("/detokenize", {"tokens": "abc"}, "tokens"),
    ("/detokenize", {"tokens": [1, -1]}, "tokens"),
    ("/detokenize", {"tokens": [100000]}, "tokens"),
])
def test_wrong_types_and_ranges_are_400_naming_the_field(server, path, body, param):
    status, payload, _ = request(server, "POST", path, body)
    check_error(status, payload, 400, param)


def test_prompt_token_outside_vocabulary_is_400(server):
    status, payload, _ = request(server, "POST", "/v1/completions", {"prompt": [1, 2, 99999], "max_tokens": 2})
    error = check_error(status, payload, 400)
    assert "99999" in error["message"]


def test_prompt_longer_than_max_model_len_names_both_lengths(server):
    ids = [65] * (server.max_model_len + 10)
    status, payload, _ = request(server, "POST", "/v1/completions", {"prompt": ids, "max_tokens": 1})
    error = check_error(status, payload, 400, "prompt")
    assert str(len(ids)) in error["message"] and str(server.max_model_len) in error["message"]


def test_unknown_fields_are_tolerated(server):
    status, payload, _ = request(server, "POST", "/v1/completions",
                                 {"prompt": "x", "max_tokens": 2, "user": "me", "some_future_field": {"a": 1}})
    assert status == 200, payload


def test_bad_utf8_is_400(server):
    raw = b'{"prompt": "caf\xc3\x28 \xff\xfe", "max_tokens": 2}'
    status, payload, _ = request(server, "POST", "/v1/completions", raw=raw)
    check_error(status, payload, 400)
    # Escaped lone surrogates are not valid UTF-8 either.
    status, payload, _ = request(server, "POST", "/v1/completions", raw=b'{"prompt": "\\ud800", "max_tokens": 2}')
    check_error(status, payload, 400)
    still_serving(server)


def test_huge_body_is_413(server):
    body = json.dumps({"prompt": "a" * (2 << 20), "max_tokens": 1}).encode()  # 2 MiB > the 1 MiB limit
    status, payload, _ = request(server, "POST", "/v1/completions", raw=body)
    error = check_error(status, payload, 413)
    assert str(1 << 20) in error["message"]
    still_serving(server)


def test_huge_chunked_body_is_413(server):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    piece = b"a" * 65536

    def chunks():
        yield b'{"prompt": "'
        for _ in range(40):  # 2.5 MiB
            yield piece
        yield b'"}'

    connection.request("POST", "/v1/completions", body=chunks(), headers={"Content-Type": "application/json"},
                       encode_chunked=True)
    response = connection.getresponse()
    check_error(response.status, response.read(), 413)
    connection.close()
    still_serving(server)


@pytest.mark.parametrize("method,path", [("GET", "/nope"), ("POST", "/v1/nope"), ("GET", "/v1/completions"),
                                         ("POST", "/v2/completions"), ("DELETE", "/v1/models")])
def test_unknown_routes_are_404(server, method, path):
    status, payload, _ = request(server, method, path, {} if method == "POST" else None)
    check_error(status, payload, 404)


def test_unknown_model_is_404(server):
    status, payload, _ = request(server, "POST", "/v1/completions", {"model": "other-model", "prompt": "x"})
    error = check_error(status, payload, 404)
    assert error["code"] == "model_not_found"
    # The served name and the checkpoint directory's basename are both accepted.
    for name in (SERVED_NAME, "qwen3-tiny-chat"):
        status, payload, _ = request(server, "POST", "/v1/completions", {"model": name, "prompt": "x", "max_tokens": 1})
        assert status == 200, payload


def test_health_models_tokenize_detokenize(server):
    status, payload, _ = request(server, "GET", "/health")
    assert status == 200
    status, payload, _ = request(server, "GET", "/v1/models")
    assert status == 200 and json.loads(payload)["data"][0]["id"] == SERVED_NAME
    status, payload, _ = request(server, "POST", "/tokenize", {"prompt": "Hello world"})
    body = json.loads(payload)
    assert status == 200 and list(body) == ["count", "max_model_len", "tokens"]
    assert body["count"] == len(body["tokens"]) > 0 and body["max_model_len"] == server.max_model_len
    status, payload, _ = request(server, "POST", "/detokenize", {"tokens": body["tokens"]})
    assert status == 200 and json.loads(payload) == {"prompt": "Hello world"}
    status, payload, _ = request(server, "POST", "/tokenize",
                                 {"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": True})
    ids = json.loads(payload)["tokens"]
    status, payload, _ = request(server, "POST", "/detokenize", {"tokens": ids})
    assert json.loads(payload)["prompt"] == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def test_metrics_is_prometheus_text(server):
    status, payload, response = request(server, "GET", "/metrics")
    assert status == 200 and response.getheader("Content-Type").startswith("text/plain")
    text = payload.decode()
    for family in ("lathe_kv_blocks_used", "lathe_kv_blocks_total", "lathe_num_requests_running",
                   "lathe_num_requests_waiting", "lathe_time_to_first_token_seconds",
                   "lathe_time_per_output_token_seconds", "lathe_e2e_request_latency_seconds",
                   "lathe_prompt_tokens_total", "lathe_generation_tokens_total", "lathe_http_requests_total"):
        assert f"# TYPE {family} " in text, family


def test_api_key(auth_server):
    body = {"prompt": "x", "max_tokens": 1}
    status, payload, response = request(auth_server, "POST", "/v1/completions", body)
    error = check_error(status, payload, 401)
    assert error["type"] == "authentication_error"
    assert response.getheader("WWW-Authenticate") == "Bearer"
    for header in ("Bearer wrong", "Bearer sekrit-key2", "Bearer sekrit-ke", "Basic sekrit-key", "sekrit-key", "Bearer "):
        status, payload, _ = request(auth_server, "POST", "/v1/completions", body, {"Authorization": header})
        check_error(status, payload, 401)
    status, payload, _ = request(auth_server, "GET", "/v1/models")
    check_error(status, payload, 401)
    status, payload, _ = request(auth_server, "POST", "/v1/completions", body, {"Authorization": "Bearer sekrit-key"})
    assert status == 200, payload
    # Only /v1/* is protected (as in vLLM).
    assert request(auth_server, "GET", "/health")[0] == 200
    assert request(auth_server, "GET", "/metrics")[0] == 200
    assert request(auth_server, "POST", "/tokenize", {"prompt": "x"})[0] == 200


def raw_socket(server):
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    return sock


def read_response(sock) -> bytes:
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk


def test_slow_client_body_in_pieces(server):
    body = json.dumps({"prompt": "slow and steady", "max_tokens": 3, "temperature": 0}).encode()
    head = (f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    sock = raw_socket(server)
    for i in range(0, len(head), 7):  # headers trickle in
        sock.sendall(head[i:i + 7])
        time.sleep(0.02)
    for i in range(0, len(body), 5):  # and so does the body, with pauses well under the read timeout
        sock.sendall(body[i:i + 5])
        time.sleep(0.1 if i % 20 == 0 else 0.01)
    reply = read_response(sock)
    sock.close()
    status_line, _, rest = reply.partition(b"\r\n")
    assert b" 200 " in status_line, reply
    payload = json.loads(rest.partition(b"\r\n\r\n")[2])
    assert payload["usage"]["completion_tokens"] >= 1


def test_client_that_stops_sending_mid_body_does_not_block_others(server):
    sock = raw_socket(server)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"prompt\": ")
    still_serving(server)  # served while that body is still incomplete
    sock.close()
    still_serving(server)


def test_client_that_never_reads(server):
    before = server.metrics()
    body = json.dumps({"prompt": "never read", "max_tokens": 3000, "stream": True, "ignore_eos": True}).encode()
    sock = raw_socket(server)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    # Others are served while it sits there.
    for _ in range(3):
        still_serving(server)
    sock.close()
    samples = server.wait_idle(timeout=15)
    assert samples["lathe_kv_blocks_used"] == 0
    assert samples["lathe_requests_submitted_total"] - before["lathe_requests_submitted_total"] == 4


def test_non_streaming_client_disconnect_cancels(server):
    before = server.metrics()
    body = json.dumps({"prompt": "gone", "max_tokens": 4000, "ignore_eos": True}).encode()
    sock = raw_socket(server)
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 + f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
    time.sleep(0.05)
    sock.close()  # long before the answer: the connection probe notices and the engine cancels
    samples = server.wait_idle(timeout=10)
    assert samples["lathe_kv_blocks_used"] == 0
    cancelled = 'lathe_requests_finished_total{finish_reason="cancelled"}'
    assert samples[cancelled] - before[cancelled] == 1
    assert samples["lathe_generation_tokens_total"] - before["lathe_generation_tokens_total"] < 4000


def test_many_bad_requests_in_parallel_do_not_disturb_good_ones(server):
    results = []

    def bad():
        for raw in (b"{", b'{"prompt": 1}', b"\xff\xfe"):
            results.append(request(server, "POST", "/v1/completions", raw=raw)[0])

    def good():
        status, payload, _ = request(server, "POST", "/v1/completions",
                                     {"prompt": "steady", "max_tokens": 4, "temperature": 0})
        results.append(status)

    threads = [threading.Thread(target=bad) for _ in range(8)] + [threading.Thread(target=good) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [200] * 8 + [400] * 24


def test_port_in_use_fails_to_start(server):
    import subprocess

    from conftest import MODEL_DIR, lathe_binary
    result = subprocess.run([str(lathe_binary()), "serve", str(MODEL_DIR), "--port", str(server.port)],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert f"--port {server.port}: cannot bind" in result.stderr
    still_serving(server)


@pytest.mark.parametrize("template", [
    '{{"prompt": "x", "max_tokens": 1, "junk": {nested}}}',
    '{{"messages": [{{"role": "user", "content": "hi"}}], "max_tokens": 1, "chat_template_kwargs": {{"x": {nested}}}}}',
    '{{"messages": [{{"role": "user", "content": "hi", "extra": {nested}}}], "max_tokens": 1}}',
    '{{"messages": [{{"role": "user", "content": "hi"}}], "tools": [{{"type": "function", "function": '
    '{{"name": "f", "parameters": {nested}}}}}]}}',
])
def test_deeply_nested_json_is_400_not_a_crash(server, template):
    depth = 200000
    raw = template.format(nested="[" * depth + "]" * depth).encode()
    path = "/v1/completions" if raw.startswith(b'{"prompt"') else "/v1/chat/completions"
    status, payload, _ = request(server, "POST", path, raw=raw)
    error = check_error(status, payload, 400)
    assert "deeper" in error["message"]
    still_serving(server)
