"""n>1 behaviour of the real sglang Engine in THIS interpreter (a harness ``cpu`` or GPU env).

Runs inside an engine environment (never imports harness). Reads JSON on stdin:
    {"model_config": {...config.json...}, "n": 2, "max_new_tokens": 200, "settle_s": 2.0,
     "engine_kwargs": {...sglang.Engine arguments...}}
     optional: "n_table": false (skip the questions below), "params_cases": [{...}] (each through
     the real engine's generate), "tokenizer": true (a tiny real tokenizer beside the weights)
writes JSON on stdout: {"version", "module_file", "startup_s", "scenarios": {...}, "params": [...]}.

One engine start answers four questions (weights are dummy, prompts are token ids):
- ids: does each of the n choices get its own id, and is any of them the caller's rid?
- abort_caller: after the first streamed chunk, abort by the caller's rid; how does each choice end?
- abort_choices: the same, aborting each choice's own id.
- cancel_midstream: the consumer stops after the first chunk (aclose) and the caller's rid is
  aborted, as a server does on disconnect; does every unfinished choice end aborted, and is
  request state left in ``rid_to_state``?
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import sys
import tempfile
import time

PROMPT = [1, 17, 29, 41, 53, 67]


def finish_type(out: dict | None) -> str | None:
    if not out:
        return None
    fr = (out.get("meta_info") or {}).get("finish_reason")
    return fr.get("type") if isinstance(fr, dict) else (str(fr) if fr else None)


def state_view(state) -> dict:
    outs = getattr(state, "out_list", None) or []
    last = outs[-1] if outs else None
    return {"finished": bool(getattr(state, "finished", False)), "finish": finish_type(last)}


async def stream_until(gen, on_first, deadline_s: float) -> dict:
    """Consume a streamed n>1 request; call on_first() after the first chunk; per choice index
    the last finish type seen (None: the stream ended without one for that choice)."""
    final: dict[int, str | None] = {}
    ids: dict[int, str] = {}
    first = True
    end = time.monotonic() + deadline_s
    async for chunk in gen:
        idx = int(chunk.get("index", 0))
        ids[idx] = chunk["meta_info"]["id"]
        final[idx] = finish_type(chunk)
        if first:
            first = False
            await on_first()
        if time.monotonic() > end:
            await gen.aclose()
            break
    return {"choice_ids": [ids[i] for i in sorted(ids)], "final": [final[i] for i in sorted(final)]}


async def scenarios(eng, n: int, max_new: int, settle: float) -> dict:
    tm = eng.tokenizer_manager
    sp = {"max_new_tokens": max_new, "n": n, "temperature": 1.0, "ignore_eos": True}
    result: dict = {}

    async def run_stream(rid: str, on_first):
        before = set(tm.rid_to_state)
        gen = await eng.async_generate(input_ids=PROMPT, sampling_params=sp, stream=True, rid=rid)
        return gen, before

    # ids: non-streamed
    before = set(tm.rid_to_state)
    outs = await eng.async_generate(
        input_ids=PROMPT, sampling_params=dict(sp, max_new_tokens=8), rid="harness-ids"
    )
    ids = [o["meta_info"]["id"] for o in outs]
    await asyncio.sleep(settle)
    result["ids"] = {
        "caller_rid": "harness-ids",
        "choice_ids": ids,
        "distinct": len(set(ids)) == len(ids),
        "caller_rid_among_choices": "harness-ids" in ids,
        "state_left": sorted(set(tm.rid_to_state) - before),
    }

    for name, how in (("abort_caller", "caller"), ("abort_choices", "choices")):
        rid = f"harness-{name}"
        before = set(tm.rid_to_state)
        seen: dict = {}

        async def on_first(rid=rid, before=before, how=how, seen=seen):
            live = sorted(set(tm.rid_to_state) - before)
            seen["live_at_abort"] = live
            seen["caller_rid_in_state"] = rid in tm.rid_to_state
            targets = [rid] if how == "caller" else live
            seen["aborted"] = targets
            for t in targets:
                tm.abort_request(rid=t)

        gen = await eng.async_generate(input_ids=PROMPT, sampling_params=sp, stream=True, rid=rid)
        streamed = await stream_until(gen, on_first, deadline_s=120)
        await asyncio.sleep(settle)
        result[name] = {
            "caller_rid": rid,
            **seen,
            **streamed,
            "all_ended_aborted": all(f == "abort" for f in streamed["final"]),
            "state_left": sorted(set(tm.rid_to_state) - before),
        }

    # cancellation mid-stream: the consumer goes away after the first chunk
    rid = "harness-cancel"
    before = set(tm.rid_to_state)
    gen = await eng.async_generate(input_ids=PROMPT, sampling_params=sp, stream=True, rid=rid)
    first = await gen.__anext__()
    live = sorted(set(tm.rid_to_state) - before)
    states = {r: tm.rid_to_state[r] for r in live}
    unfinished = [r for r, s in states.items() if not s.finished]
    await gen.aclose()
    tm.abort_request(rid=rid)  # what a server's abort task does with the caller's rid
    await asyncio.sleep(settle)
    views = {r: state_view(s) for r, s in states.items()}
    result["cancel_midstream"] = {
        "caller_rid": rid,
        "first_chunk_id": first["meta_info"]["id"],
        "choice_rids": live,
        "unfinished_at_cancel": unfinished,
        "after": views,
        "every_unfinished_aborted": all(views[r]["finish"] == "abort" for r in unfinished),
        "ran_to_completion": [r for r in unfinished if views[r]["finish"] not in ("abort", None)],
        "state_left": sorted(set(tm.rid_to_state) - before),
    }
    return result


def write_tiny_tokenizer(folder: str, vocab_size: int) -> None:
    """A real (tokenizers/transformers) word-level tokenizer for the tiny model: <unk>=0, <s>=1, </s>=2."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"t{i}": i for i in range(3, vocab_size)}}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(os.path.join(folder, "tokenizer.json"))
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as fh:
        json.dump(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
                "model_max_length": 1024,
            },
            fh,
        )


async def params_through_engine(eng, cases: list) -> list:
    """Each SamplingParams case through the real engine's generate: ACCEPTED or the exact exception."""
    results = []
    for case in cases:
        try:
            await eng.async_generate(input_ids=PROMPT, sampling_params=dict(case))
            results.append({"outcome": "ACCEPTED"})
        except Exception as exc:  # the engine's exact answer is the result
            results.append({"outcome": f"{type(exc).__name__}: {exc}"})
    return results


async def run_all(eng, req: dict) -> dict:
    res = {}
    if req.get("n_table", True):
        res = await scenarios(
            eng,
            int(req.get("n", 2)),
            int(req.get("max_new_tokens", 200)),
            float(req.get("settle_s", 2.0)),
        )
    return {
        "scenarios": res,
        "params": await params_through_engine(eng, req.get("params_cases", [])),
    }


def main() -> int:
    req = json.load(sys.stdin)
    if req["engine_kwargs"].get("device") == "cpu":  # never on the GPU path
        os.environ.setdefault("SGLANG_USE_CPU_ENGINE", "1")
    with tempfile.TemporaryDirectory(prefix="harness-tiny-model-") as model_dir:
        with open(os.path.join(model_dir, "config.json"), "w") as fh:
            json.dump(req["model_config"], fh)
        kwargs = dict(req["engine_kwargs"])
        if req.get("tokenizer"):  # a real tokenizer beside the weights: skip_tokenizer_init off
            write_tiny_tokenizer(model_dir, int(req["model_config"]["vocab_size"]))
            kwargs["skip_tokenizer_init"] = False
        t0 = time.monotonic()
        import sglang  # the real package (its __init__ runs here: torch, the server and all)
        from sglang.srt.entrypoints.engine import Engine

        eng = Engine(model_path=model_dir, **kwargs)
        startup = time.monotonic() - t0
        try:
            res = eng.loop.run_until_complete(run_all(eng, req))
        finally:
            eng.shutdown()
    json.dump(
        {
            "version": importlib.metadata.version("sglang"),
            "module_file": sglang.__file__,
            "startup_s": round(startup, 1),
            "tokenizer": bool(req.get("tokenizer")),
            **res,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
