"""`lathe serve --load-format dummy --tokenizer DIR`: a directory holding only config.json and
generation_config.json serves with deterministic random weights and a tokenizer from elsewhere."""
import shutil

from conftest import MODEL_DIR, LatheServer


def test_dummy_weights_with_a_separate_tokenizer(tmp_path):
    for name in ("config.json", "generation_config.json"):
        shutil.copy(MODEL_DIR / name, tmp_path / name)
    replies = []
    for _ in range(2):
        server = LatheServer("--load-format", "dummy", "--tokenizer", str(MODEL_DIR), model_dir=tmp_path)
        try:
            status, body = server.post_json("/v1/completions", {"model": server.served_name, "prompt": "Hello there",
                                                                "max_tokens": 8, "temperature": 0, "ignore_eos": True})
        finally:
            server.stop()
        assert status == 200, body
        assert body["usage"]["completion_tokens"] == 8
        replies.append(body["choices"][0]["text"])
    # Dummy weights are deterministic: two loads produce the same greedy text.
    assert replies[0] == replies[1]


def test_unknown_load_format_fails_at_start(tmp_path):
    try:
        LatheServer("--load-format", "pickle", model_dir=MODEL_DIR)
    except RuntimeError as error:
        assert "--load-format pickle" in str(error)
    else:
        raise AssertionError("lathe serve accepted --load-format pickle")
