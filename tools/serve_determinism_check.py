#!/usr/bin/env python3
"""Batch-invariance check of a running lathe server (stdlib only, so it runs on the GPU machine).

Sends one fixed prompt at temperature 0 alone, and one seeded temperature>0 request alone, then both
again in one crowd where each has N other concurrent requests beside it (the other watched one and
N - 1 random ones, greedy and seeded, of random lengths): N + 1 requests in flight at most. Prints
whether each pair of outputs is byte-identical and exits 1 when any differs.

On CUDA a decode step wider than the GEMV tiers (ffn_gemv_max_m, 32) takes the GEMM, whose bits
differ: run the server with --max-num-seqs <= 32, or keep N + 1 <= 32, to check the invariance the
engine promises (the default N = 31 puts exactly 32 requests in flight).

--save FILE writes the alone outputs; --expect FILE compares this server's alone outputs with a
file another server (other flags: step budget, KV pool) saved for the same --watched-len.

    python3 tools/serve_determinism_check.py --url http://127.0.0.1:8000 --model NAME [--others 31]
        [--watched-len 37] [--save FILE | --expect FILE]
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
    parser.add_argument("--watched-len", type=int, default=37, help="prompt tokens of the watched requests")
    parser.add_argument("--save", help="write the alone outputs here (JSON)")
    parser.add_argument("--expect", help="compare the alone outputs with this file (written by --save)")
    args = parser.parse_args()
    rng = random.Random(1234)
    watched_ids = [rng.randrange(3, args.vocab) for _ in range(args.watched_len)]
    greedy = {"model": args.model, "prompt": watched_ids, "max_tokens": args.max_tokens, "temperature": 0,
              "ignore_eos": True}
    seeded = dict(greedy, temperature=0.8, top_p=0.9, seed=77)

    alone_greedy = complete(args.url, greedy)
    alone_seeded = complete(args.url, seeded)
    ok = True
    if args.save:
        with open(args.save, "w") as f:
            json.dump({"greedy": alone_greedy, "seeded": alone_seeded}, f)
    if args.expect:
        with open(args.expect) as f:
            other = json.load(f)
        for key, alone in (("greedy", alone_greedy), ("seeded", alone_seeded)):
            same = list(alone) == other[key]
            ok = ok and same
            print(f"{key}: alone here vs alone on the server that wrote {args.expect}: "
                  f"{'IDENTICAL' if same else 'DIFFERENT'} ({alone[1]} tokens)")

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
