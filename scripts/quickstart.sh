#!/usr/bin/env bash
# Fresh machine to a served model in one command: installs the dependencies, builds lathe, then
# runs it on the tiny Qwen3 fixture model that ships in the repository (CPU, no GPU needed):
# one chat generation on the command line, then `lathe serve` with one OpenAI chat request sent
# to it over HTTP. Point the same commands at a real checkpoint directory to serve a real model.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
"$here/scripts/build.sh"
lathe="${LATHE_BUILD_DIR:-$here/build}/lathe"
model="$here/tests/fixtures/models/qwen3-tiny-chat"
port="${LATHE_QUICKSTART_PORT:-8765}"

echo "== lathe info"
"$lathe" info
echo "== lathe generate (tiny random-weight fixture: the text is noise, the pipeline is real)"
"$lathe" generate "$model" --chat "Hello, who are you?" --max-tokens 24 --temperature 0

echo "== lathe serve on 127.0.0.1:$port, one chat completion"
"$lathe" serve "$model" --port "$port" --served-model-name tiny --device auto &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -s "http://127.0.0.1:$port/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"model": "tiny", "messages": [{"role": "user", "content": "Hello!"}], "max_tokens": 16, "temperature": 0}'
echo
echo "== done. Serve a real checkpoint with: $lathe serve /path/to/Qwen3-8B --port 8000"
