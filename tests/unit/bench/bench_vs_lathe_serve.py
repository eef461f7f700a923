#!/usr/bin/env python3
"""`lathe bench serve` against a real `lathe serve` (the tiny tokenizer-complete fixture on the CPU):
the load generator and lathe's OpenAI streaming speak the same protocol. Every request completes,
produces exactly --output-len tokens (ignore_eos) and the server's usage reports the prompt length
sent; the model name comes from GET /v1/models. Needs the built binary (LATHE_BINARY)."""

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "models" / "qwen3-tiny-chat"


def main() -> int:
    binary = os.environ.get("LATHE_BINARY")
    if not binary or not Path(binary).exists():
        print("skipped: LATHE_BINARY is not set")
        return 77
    server = subprocess.Popen([binary, "serve", str(FIXTURE), "--host", "127.0.0.1", "--port", "0", "--device", "cpu",
                               "--served-model-name", "tiny-bench"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    port = []
    seen = threading.Event()

    def read_log():
        for line in server.stderr:
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            if m and not seen.is_set():
                port.append(int(m.group(1)))
                seen.set()

    threading.Thread(target=read_log, daemon=True).start()
    try:
        assert seen.wait(60), "lathe serve printed no 'listening on' line"
        url = f"http://127.0.0.1:{port[0]}"
        for _ in range(600):
            try:
                if urllib.request.urlopen(url + "/health", timeout=2).status == 200:
                    break
            except Exception:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError("/health never answered 200")
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "serve.json"
            plot = Path(tmp) / "serve.svg"
            run = subprocess.run([binary, "bench", "serve", "--url", url, "--concurrency", "1,3", "--num-prompts", "6",
                                  "--input-len", "20", "--output-len", "8", "--tokenizer", str(FIXTURE),
                                  "--out", str(out), "--plot", str(plot)],
                                 capture_output=True, text=True, timeout=240)
            assert run.returncode == 0, run.stderr
            report = json.loads(out.read_text())
            assert plot.read_text().startswith("<svg")
        assert report["model"] == "tiny-bench", report["model"]
        assert [lvl["concurrency"] for lvl in report["levels"]] == [1, 3]
        for lvl in report["levels"]:
            assert lvl["completed"] == 6 and lvl["failed"] == 0, lvl
            assert lvl["total_output_tokens"] == 6 * 8, lvl
            assert lvl["total_input_tokens"] == 6 * 20, lvl
            # One chunk per token, except that the server holds back a token whose text is an
            # incomplete UTF-8 sequence and sends it with the next one (random ids make those).
            assert 6 <= lvl["itl_ms"]["count"] <= 6 * 7, lvl
            assert lvl["ttft_ms"]["p50"] > 0 and lvl["tpot_ms"]["count"] == 6, lvl
        print("ok")
        return 0
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()


if __name__ == "__main__":
    sys.exit(main())
