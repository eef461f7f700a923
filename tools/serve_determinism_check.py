#!/usr/bin/env python3
"""Batch-invariance check of a running lathe server (stdlib only, so it runs on the GPU machine).

Sends one fixed prompt at temperature 0 alone, and one seeded temperature>0 request alone, then both
again in one crowd where each has N other concurrent requests beside it (the other watched one and
N - 1 random ones, greedy and seeded, of random lengths): N + 1 requests in flight at most. Prints
whether each pair of outputs is byte-identical and exits 1 when any differs.

On CUDA a decode step wider than the GEMV tiers (ffn_gemv_max_m, 32) takes the GEMM, whose bits
differ: run the server with --max-num-seqs <= 32, or keep N + 1 <= 32, to check the invariance the
engine promises (the default N = 31 puts exactly 32 requests in flight).

    python3 tools/serve_determinism_check.py --url http://127.0.0.1:8000 --model NAME [--others 31]
"""
import argparse
import json
import random
import sys
import threading
import urllib.request


def complete(url, body):
    request = urllib.request.Request(url + "/v1/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=600) as response:
        reply = json.loads(response.read())
    return reply["choices"][0]["text"], reply["usage"]["completion_tokens"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--others", type=int, default=31)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--vocab", type=int, default=300, help="token ids for random prompts are drawn below this")
    args = parser.parse_args()
    rng = random.Random(1234)
    watched_ids = [rng.randrange(3, args.vocab) for _ in range(37)]
    greedy = {"model": args.model, "prompt": watched_ids, "max_tokens": args.max_tokens, "temperature": 0,
              "ignore_eos": True}
    seeded = dict(greedy, temperature=0.8, top_p=0.9, seed=77)

    alone_greedy = complete(args.url, greedy)
    alone_seeded = complete(args.url, seeded)

    results = {}
    def run(key, body):
        results[key] = complete(args.url, body)
    threads = []
    for i in range(args.others - 1):  # each watched request also has the other one beside it
        length = rng.randrange(1, 200)
        body = {"model": args.model, "prompt": [rng.randrange(3, args.vocab) for _ in range(length)],
                "max_tokens": rng.randrange(1, 64), "temperature": rng.choice([0, 0.7]), "seed": i, "ignore_eos": True}
        threads.append(threading.Thread(target=run, args=(f"other{i}", body)))
    threads.insert(len(threads) // 2, threading.Thread(target=run, args=("greedy", greedy)))
    threads.insert(len(threads) // 3, threading.Thread(target=run, args=("seeded", seeded)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    ok = True
    for key, alone in (("greedy", alone_greedy), ("seeded", alone_seeded)):
        same = results[key] == alone
        ok = ok and same
        print(f"{key}: alone vs beside {args.others} others: {'IDENTICAL' if same else 'DIFFERENT'} "
              f"({alone[1]} tokens)")
        if not same:
            print(f"  alone : {alone[0]!r}\n  crowd : {results[key][0]!r}")
    print("determinism:", "PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
