"""A GPT-style decoder (pre-norm blocks, causal self-attention with a KV cache, GELU MLP) and its
export to ONNX as the two graphs a generation loop runs:

  prefill:  input_ids (1, seq)                        -> logits (1, seq, vocab),
                                                         present_key_i / present_value_i
  decode:   input_ids (1, 1), past_key_i / past_value_i (1, heads, past, head_size)
                                                      -> logits (1, 1, vocab), present_*

with the sequence and the past length dynamic dims, as Hugging Face's exports write them. The
weights are random (seeded): the example measures speed, and the tests compare against ONNX
Runtime, neither of which needs a trained model.

    /usr/bin/python3 gpt_decoder.py OUT_DIR [--size small|base]
"""
import argparse
import math
import sys
from pathlib import Path

SIZES = {
    # name: (vocabulary, width, heads, layers, positions)
    "small": (1000, 128, 4, 2, 1024),
    "base": (8192, 512, 8, 6, 2048),
}


def build(size="base", seed=0):
    import torch
    from torch import nn

    vocab, width, heads, layers, positions = SIZES[size]
    torch.manual_seed(seed)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)
            self.register_buffer("causal", torch.tril(torch.ones(positions, positions)).bool())

        def heads(self, x):
            return x.view(x.shape[0], x.shape[1], heads, width // heads).transpose(1, 2)

        def forward(self, x, past_key, past_value):
            q, k, v = self.qkv(self.norm1(x)).split(width, dim=-1)
            q, k, v = self.heads(q), self.heads(k), self.heads(v)
            if past_key is not None:
                k, v = torch.cat([past_key, k], dim=2), torch.cat([past_value, v], dim=2)
            total, seq = k.shape[2], q.shape[2]
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(width // heads)
            mask = self.causal[total - seq:total, :total]
            scores = scores.masked_fill(~mask, -1e4)
            y = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2)
            x = x + self.proj(y.reshape(x.shape[0], seq, width))
            x = x + self.down(nn.functional.gelu(self.up(self.norm2(x))))
            return x, k, v

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(positions, width)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)

        def forward(self, input_ids, *past):
            past_length = past[0].shape[2] if past else 0
            where = torch.arange(past_length, past_length + input_ids.shape[1]).unsqueeze(0)
            x = self.tokens(input_ids) + self.positions(where)
            presents = []
            for i, block in enumerate(self.blocks):
                x, k, v = block(x, *(past[2 * i:2 * i + 2] if past else (None, None)))
                presents += [k, v]
            return (self.head(self.norm(x)), *presents)

    return Decoder().eval()


def names(layers):
    past = [f"past_{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    present = [f"present_{kind}_{i}" for i in range(layers) for kind in ("key", "value")]
    return past, present


def export(out_dir, size="base", opset=14):
    """Writes OUT_DIR/gpt_prefill.onnx and OUT_DIR/gpt_decode.onnx; returns their paths."""
    import torch

    vocab, width, heads, layers, _ = SIZES[size]
    model = build(size)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    past, present = names(layers)
    head_size = width // heads
    total_axes = {name: {2: "total"} for name in present}
    prefill, decode = out_dir / "gpt_prefill.onnx", out_dir / "gpt_decode.onnx"
    with torch.no_grad():
        ids = torch.zeros(1, 8, dtype=torch.long)
        torch.onnx.export(model, (ids,), str(prefill), opset_version=opset,
                          input_names=["input_ids"], output_names=["logits", *present],
                          dynamic_axes={"input_ids": {1: "seq"}, "logits": {1: "seq"},
                                        **total_axes})
        cache = tuple(torch.zeros(1, heads, 8, head_size) for _ in past)
        torch.onnx.export(model, (torch.zeros(1, 1, dtype=torch.long), *cache), str(decode),
                          opset_version=opset, input_names=["input_ids", *past],
                          output_names=["logits", *present],
                          dynamic_axes={**{name: {2: "past"} for name in past}, **total_axes})
    return prefill, decode


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--size", choices=list(SIZES), default="base")
    args = parser.parse_args()
    for path in export(args.out_dir, args.size):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
