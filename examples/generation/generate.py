"""Greedy generation with a GPT-style decoder exported to ONNX with a KV cache, with anvil and
with ONNX Runtime, printing each one's decode rate in tokens/s.

    python generate.py MODEL_DIR [--tokens 32] [--prompt-length 16] [--threads 2]

MODEL_DIR holds gpt_prefill.onnx and gpt_decode.onnx (gpt_decoder.py writes them). anvil
compiles each graph once for its VM (their dims are dynamic: the prompt length, the past
length); the prompt runs through the prefill graph, then each new token through the decode
graph against the cache the previous step returned. ONNX Runtime runs the same loop on the same
graphs, with the same number of threads; both must choose the same tokens.
"""
import argparse
import os
import sys
import time
from pathlib import Path


def greedy(run_prefill, run_decode, prompt, tokens):
    """The generated tokens and the decode steps' seconds. run_* take numpy feeds and return
    numpy outputs: logits, then the cache."""
    import numpy as np

    outputs = run_prefill(np.array([prompt], dtype=np.int64))
    sequence = list(prompt) + [int(outputs[0][0, -1].argmax())]
    cache = outputs[1:]
    start = time.perf_counter()
    for _ in range(tokens - 1):
        outputs = run_decode(np.array([[sequence[-1]]], dtype=np.int64), cache)
        sequence.append(int(outputs[0][0, -1].argmax()))
        cache = outputs[1:]
    return sequence[len(prompt):], time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--prompt-length", type=int, default=16)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if args.tokens < 2 or args.prompt_length < 1:
        parser.error("--tokens must be at least 2 and --prompt-length at least 1")
    os.environ["ANVIL_NUM_THREADS"] = str(args.threads)
    import onnx
    import onnxruntime

    import anvil

    prefill_path, decode_path = args.model_dir / "gpt_prefill.onnx", args.model_dir / "gpt_decode.onnx"
    prompt = [(i * 37 + 11) % 997 for i in range(args.prompt_length)]

    machines = {}
    for path in (prefill_path, decode_path):
        mod, params = anvil.frontend.from_onnx(onnx.load(str(path)))
        with anvil.transform.PassContext(opt_level=3):
            machines[path] = anvil.vm.VirtualMachine(anvil.vm.build(mod, "llvm", params=params),
                                                     anvil.cpu())
    decode_inputs = [i.name for i in onnx.load(str(decode_path), load_external_data=False).graph.input]

    def anvil_prefill(ids):
        return [o.numpy() for o in machines[prefill_path]["main"](anvil.nd.array(ids))]

    def anvil_decode(ids, cache):
        return [o.numpy() for o in
                machines[decode_path]["main"](*(anvil.nd.array(a) for a in [ids, *cache]))]

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    sessions = {p: onnxruntime.InferenceSession(str(p), options, providers=["CPUExecutionProvider"])
                for p in (prefill_path, decode_path)}

    def ort_prefill(ids):
        return sessions[prefill_path].run(None, {"input_ids": ids})

    def ort_decode(ids, cache):
        return sessions[decode_path].run(None, dict(zip(decode_inputs, [ids, *cache])))

    results = {}
    for name, prefill, decode in (("anvil", anvil_prefill, anvil_decode),
                                  ("onnxruntime", ort_prefill, ort_decode)):
        greedy(prefill, decode, prompt, 2)  # warm-up
        results[name] = greedy(prefill, decode, prompt, args.tokens)
    steps = args.tokens - 1
    print(f"{steps} decode steps at past {args.prompt_length} to "
          f"{args.prompt_length + steps - 1}, {args.threads} threads:")
    for name, (tokens, seconds) in results.items():
        print(f"  {name:12s} {steps / seconds:8.1f} tokens/s   tokens {' '.join(map(str, tokens))}")
    if results["anvil"][0] != results["onnxruntime"][0]:
        sys.exit("anvil and ONNX Runtime chose different tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
