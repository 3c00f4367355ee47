"""Exports the torchvision models of the model tests (and the small networks of
family_networks.py) to ONNX, once, into a cache.

    .venv/bin/python tests/models/export_models.py [--build-dir DIR] [MODEL ...]

For each model it writes, into the cache directory:
  <name>.onnx          the model, random weights (seed 0), opset 13, input (1, 3, 224, 224)
  <name>.input.npz     a seeded input, keyed by the ONNX input name
  <name>.expected.npz  ONNX Runtime's outputs on that input, keyed output_0, output_1, ...
  <name>.stamp         written last; names the exporter and library versions
The int8 models (INT8_MODELS) also write output_scale into <name>.expected.npz; they and the
float classifiers of CHECKED_MODELS write ONNX Runtime's outputs on the seeded batch
check_inputs.npz into <name>.checks.npz (the float ones PyTorch's bf16 outputs too).

A model whose stamp matches is not exported again, so only a fresh build tree
(or a change to this script or to torch, torchvision, onnx, onnxruntime or numpy)
pays for the export. Nothing is downloaded: every model is built with
weights=None.

The cache is $ANVIL_MODEL_CACHE when set, else <build-dir>/model-cache.
"""

import argparse
import fcntl
import hashlib
import json
import os
import sys
import time
from pathlib import Path

# Statically quantized copies of three of them (ONNX Runtime's quantize_static: QDQ format,
# per-channel int8 weights, uint8 activations, 8 seeded calibration inputs), each exported
# after its float model.
INT8_MODELS = {"resnet18_int8": "resnet18", "mobilenet_v2_int8": "mobilenet_v2",
               "resnet50_int8": "resnet50"}
# Recurrent networks (torch.nn.LSTM / GRU exported as ONNX LSTM / GRU), built here rather than
# taken from torchvision; each has its own inputs (RECURRENT_INPUTS).
RECURRENT_MODELS = ["lstm_classifier", "gru_speech", "gru_decoder_step"]
# A BERT-style encoder written as Hugging Face's BERT computes (so that ONNX Runtime's transformer
# optimizer recognizes it), saved as the optimizer rewrites it (EmbedLayerNormalization,
# Attention, SkipLayerNormalization, BiasGelu); its expected outputs are ONNX Runtime's on the
# model before optimization.
TRANSFORMER_MODELS = ["bert_ort_optimized"]
# Small networks of families the compiler was not built for (family_networks.py): an audio
# encoder (Conv1d stack, GroupNorm), a 3-D video ResNet and a UNet (GroupNorm, ConvTranspose2d,
# attention).
NETWORK_MODELS = ["audio_tiny", "video_tiny", "unet_tiny"]
# torchvision's detection models (random weights, score thresholds lowered so that boxes come
# out) on one 320 x 320 image, post-processing included: an anchor-based single-stage detector,
# an anchor-free one and a two-stage one (region proposals, RoiAlign). Exported with their If,
# TopK, NonMaxSuppression and Loop nodes as torch.onnx writes them.
DETECTION_MODELS = ["ssdlite320_mobilenet_v3_large", "fcos_resnet50_fpn", "fasterrcnn_resnet50_fpn"]
DETECTION_SIZE = 320
# A GPT-style decoder with a KV cache (examples/generation/gpt_decoder.py, its small size), as a
# generation loop runs it: gpt_decode, one token against a cache of a symbolic past length, run
# at DECODE_PAST_LENGTHS (inputs and ONNX Runtime's outputs in <name>.past<L>.input.npz /
# .expected.npz); gpt_prefill, the prompt of PREFILL_LENGTH tokens without a cache.
DECODER_MODELS = ["gpt_decode", "gpt_prefill"]
DECODE_PAST_LENGTHS = [1, 37, 300]
PREFILL_LENGTH = 32
GPT_DECODER = Path(__file__).resolve().parents[2] / "examples" / "generation" / "gpt_decoder.py"
MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "vit_b_16", "resnet50",
          *INT8_MODELS, *RECURRENT_MODELS, *TRANSFORMER_MODELS, *NETWORK_MODELS,
          *DETECTION_MODELS, *DECODER_MODELS]
# Further network families, exported on request (bench/model_bench.py): grouped convolutions
# (ResNeXt, RegNet), channel shuffles (ShuffleNet), squeeze-and-excitation (MobileNetV3,
# EfficientNet, RegNetY), dense concatenation (DenseNet), windowed attention (Swin) and
# dilated segmentation heads (FCN, DeepLabV3).
FAMILY_MODELS = ["mobilenet_v3_large", "efficientnet_b1", "shufflenet_v2_x0_5", "regnet_x_400mf",
                 "regnet_y_800mf", "resnext50_32x4d", "wide_resnet50_2", "densenet169",
                 "mnasnet0_5", "swin_t", "fcn_resnet50", "deeplabv3_resnet50"]
SEGMENTATION_MODELS = {"fcn_resnet50", "deeplabv3_resnet50"}
KNOWN_MODELS = MODELS + FAMILY_MODELS
# The seeded inputs (check_inputs.npz, one batch of them) that the int8 models and the bf16
# builds of the float classifiers (CHECKED_MODELS) are compared on, class by class: ONNX
# Runtime's outputs on them go to <name>.checks.npz.
CHECK_INPUTS = 100
CHECKED_MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "vit_b_16"]
OPSET = 13
INPUT_SHAPE = (1, 3, 224, 224)
INPUT_NAME = "input"
SEED = 0


def cache_dir(build_dir):
    env = os.environ.get("ANVIL_MODEL_CACHE")
    return Path(env) if env else Path(build_dir) / "model-cache"


def host_has_vnni():
    """Whether this x86 host has AVX-512 VNNI or AVX-VNNI: ONNX Runtime's uint8 x int8 kernels
    are exact there. Without it they sum pairs of products in saturating int16 (vpmaddubsw), so
    full-range int8 weights clip and its int8 outputs stop being an exact oracle."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return True
    return "avx512_vnni" in flags or "avx_vnni" in flags


def stamp_text():
    # Anything that changes what the files hold changes the stamp: this
    # script's own text and the versions of the libraries that produce them.
    import numpy
    import onnx
    import onnxruntime
    import torch
    import torchvision

    script = (Path(__file__).read_bytes() + (Path(__file__).parent / "family_networks.py").read_bytes()
              + GPT_DECODER.read_bytes())
    return json.dumps(
        {
            "script_sha256": hashlib.sha256(script).hexdigest(),
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__,
            "numpy": numpy.__version__,
            "vnni": host_has_vnni(),
        },
        sort_keys=True,
    )


def cached(name, out, stamp):
    """True when name's files in out were written under this stamp; otherwise its stale stamp is
    removed, so that an export killed halfway is never taken for whole."""
    stamp_path = out / f"{name}.stamp"
    if stamp_path.exists() and stamp_path.read_text() == stamp:
        print(f"{name}: cached")
        return True
    stamp_path.unlink(missing_ok=True)
    return False


def finish(name, out, stamp, what, start):
    """Writes name's stamp, last, and says how long `what` took."""
    write_atomically(out / f"{name}.stamp", lambda tmp: Path(tmp).write_text(stamp))
    print(f"{name}: {what} in {time.monotonic() - start:.1f} s")


def write_atomically(path, write):
    # A killed export must not leave a file that a later run takes for whole.
    tmp = str(path.parent / f"{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def build_model(name):
    import torch
    import torchvision

    # One thread makes the calibration pass below bit-reproducible.
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    if name in SEGMENTATION_MODELS:
        model = segmentation_output(getattr(torchvision.models.segmentation, name)(
            weights=None, weights_backbone=None, aux_loss=False))
    else:
        model = getattr(torchvision.models, name)(weights=None)
    model.eval()
    if name == "vit_b_16":
        # torchvision zero-initializes the ViT head, which would make every
        # output 0 and the comparison vacuous.
        torch.nn.init.normal_(model.heads.head.weight, std=0.02)
    calibrate_batch_norm(model)
    model.eval()
    return model


def segmentation_output(model):
    """The model with the "out" map of its result dict as its one output."""
    import torch

    class SegmentationOutput(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner(x)["out"]

    return SegmentationOutput(model)


def calibrate_batch_norm(model):
    # With freshly initialized batch-norm statistics (mean 0, variance 1) the
    # activations of mobilenet_v2 and efficientnet_b0 shrink layer by layer
    # to about 1e-9 and 1e-14, so ReLU6, sigmoid and SiLU only ever see their
    # linear range and a wrong kernel could pass. One pass over seeded data
    # in training mode sets the statistics to those of real activations.
    import numpy as np
    import torch

    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a cumulative average: one batch sets the statistics exactly
        m.train()
    batch = np.random.RandomState(SEED + 1).standard_normal((4,) + INPUT_SHAPE[1:]).astype(np.float32)
    with torch.no_grad():
        model(torch.from_numpy(batch))


def export_onnx(model, path):
    import torch

    dummy = torch.zeros(INPUT_SHAPE, dtype=torch.float32)
    # Gradients stay enabled on purpose: with them off, torch 1.13 takes the
    # fused fast path of nn.MultiheadAttention (vit_b_16), which has no ONNX
    # export; eval mode alone already fixes dropout and batch-norm statistics.
    write_atomically(
        path,
        lambda tmp: torch.onnx.export(
            model,
            dummy,
            tmp,
            opset_version=OPSET,
            input_names=[INPUT_NAME],
            output_names=["output"],
            do_constant_folding=True,
        ),
    )


def seeded_input():
    import numpy as np

    return np.random.RandomState(SEED).standard_normal(INPUT_SHAPE).astype(np.float32)


def onnxruntime_session(onnx_path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    # One thread so that the summation order, and so the expected bits, do
    # not depend on the machine's core count.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])


def run_onnxruntime(onnx_path, feeds):
    return onnxruntime_session(onnx_path).run(None, feeds)


def save_npz(path, arrays):
    import numpy as np

    def write(tmp):
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)

    write_atomically(path, write)


def export_int8(name, out, stamp):
    """Quantizes the float model, then records ONNX Runtime's int8 outputs on the seeded input
    and on the CHECK_INPUTS seeded check inputs, with the scale of the model's output."""
    import numpy as np
    import onnx
    from onnx import numpy_helper
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    base = INT8_MODELS[name]
    export_one(base, out, stamp)
    if cached(name, out, stamp):
        return
    start = time.monotonic()

    class SeededCalibration(CalibrationDataReader):
        def __init__(self):
            rng = np.random.RandomState(SEED + 2)
            self.batches = iter([{INPUT_NAME: rng.standard_normal(INPUT_SHAPE).astype(np.float32)}
                                 for _ in range(8)])

        def get_next(self):
            return next(self.batches, None)

    onnx_path = out / f"{name}.onnx"
    # Without VNNI, ONNX Runtime's own advice: weights of 7 bits (reduce_range), which its
    # saturating int16 pair sums cannot clip, so its outputs stay the exact oracle the int8 model
    # tests compare with (see host_has_vnni).
    write_atomically(onnx_path, lambda tmp: quantize_static(
        str(out / f"{base}.onnx"), tmp, SeededCalibration(), quant_format=QuantFormat.QDQ,
        per_channel=True, activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
        reduce_range=not host_has_vnni()))
    graph = onnx.load(str(onnx_path)).graph
    producer = {o: node for node in graph.node for o in node.output}[graph.output[0].name]
    if producer.op_type != "DequantizeLinear":
        raise SystemExit(f"export_models: {name}'s output is not dequantized")
    scale = {i.name: i for i in graph.initializer}[producer.input[1]]
    output_scale = np.float32(numpy_helper.to_array(scale))

    feeds = {INPUT_NAME: seeded_input()}
    save_npz(out / f"{name}.input.npz", feeds)
    save_npz(out / f"{name}.expected.npz",
             {"output_0": run_onnxruntime(onnx_path, feeds)[0], "output_scale": output_scale})
    save_checks(name, out, onnx_path)
    finish(name, out, stamp, "quantized and checked", start)


def save_checks(name, out, onnx_path, model=None):
    """Writes ONNX Runtime's first output on each of the CHECK_INPUTS seeded inputs (written to
    check_inputs.npz by the first model that needs them) into <name>.checks.npz, and, given the
    PyTorch model, PyTorch's own bf16 outputs on them (autocast, as torch_bf16): the peer the
    bf16 model tests hold anvil's class choices to."""
    import numpy as np

    rng = np.random.RandomState(SEED + 3)
    inputs = rng.standard_normal((CHECK_INPUTS,) + INPUT_SHAPE[1:]).astype(np.float32)
    checks = out / "check_inputs.npz"
    if not checks.exists():
        save_npz(checks, {INPUT_NAME: inputs})
    # One session for all of them: a session per input would hold CHECK_INPUTS copies of the
    # model's weights until the collector runs.
    session = onnxruntime_session(onnx_path)
    arrays = {"output_0": np.concatenate(
        [session.run(None, {INPUT_NAME: inputs[i:i + 1]})[0] for i in range(CHECK_INPUTS)])}
    peer = torch_bf16_outputs(model, inputs) if model is not None else None
    if peer is not None:
        arrays["torch_bf16"] = peer
    save_npz(out / f"{name}.checks.npz", arrays)


def torch_bf16_outputs(model, inputs):
    """PyTorch's outputs under bf16 autocast, or None where it has no bf16 path (torch 1.13's
    fused attention of inference mode, ViT's, takes no bf16 under autocast)."""
    import numpy as np
    import torch

    outputs = []
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        for i in range(len(inputs)):
            try:
                outputs.append(model(torch.from_numpy(inputs[i:i + 1])).float().numpy())
            except RuntimeError:
                return None
    return np.concatenate(outputs)


def recurrent_model(name):
    """The module and its seeded example inputs {name: array} (random weights, seed 0)."""
    import numpy as np
    import torch

    torch.manual_seed(SEED)
    rng = np.random.RandomState(SEED)
    nn = torch.nn

    class LstmClassifier(nn.Module):
        """Two stacked LSTM layers over a (batch, 32, 40) feature sequence, the last step's
        hidden state classified into 10 classes."""

        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(40, 128, num_layers=2, batch_first=True)
            self.head = nn.Linear(128, 10)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.head(y[:, -1])

    class GruSpeech(nn.Module):
        """A speech encoder: Conv1d features over 100 frames of 40 mel bins, a bidirectional
        GRU, per-frame log-probabilities over 29 characters."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(40, 64, 5, padding=2)
            self.gru = nn.GRU(64, 96, bidirectional=True)
            self.head = nn.Linear(192, 29)

        def forward(self, x):
            features = torch.relu(self.conv(x)).permute(2, 0, 1)  # (T, N, C)
            y, _ = self.gru(features)
            return torch.log_softmax(self.head(y), dim=-1)

    class GruDecoderStep(nn.Module):
        """One step of a seq2seq decoder: embed the previous token, attend over 20 encoder
        states, one GRU step, logits over a 1000-word vocabulary and the new hidden state."""

        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(1000, 128)
            self.gru = nn.GRU(128 + 256, 256)
            self.out = nn.Linear(256, 1000)

        def forward(self, token, hidden, encoder):
            e = self.embed(token)  # (1, N, 128)
            scores = torch.softmax(torch.einsum("nh,nth->nt", hidden[0], encoder), dim=-1)
            context = torch.einsum("nt,nth->nh", scores, encoder)
            y, h = self.gru(torch.cat([e, context.unsqueeze(0)], dim=-1), hidden)
            return self.out(y[0]), h

    if name == "lstm_classifier":
        return LstmClassifier(), {"input": rng.standard_normal((1, 32, 40)).astype(np.float32)}
    if name == "gru_speech":
        return GruSpeech(), {"input": rng.standard_normal((1, 40, 100)).astype(np.float32)}
    return GruDecoderStep(), {
        "token": rng.randint(0, 1000, (1, 1)).astype(np.int64),
        "hidden": rng.standard_normal((1, 1, 256)).astype(np.float32),
        "encoder": rng.standard_normal((1, 20, 256)).astype(np.float32)}


def export_recurrent(name, out, stamp):
    import torch

    if cached(name, out, stamp):
        return
    start = time.monotonic()
    model, feeds = recurrent_model(name)
    model.eval()
    onnx_path = out / f"{name}.onnx"
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    write_atomically(onnx_path, lambda tmp: torch.onnx.export(
        model, args, tmp, opset_version=OPSET, input_names=list(feeds),
        output_names=["output", "state"][:2 if name == "gru_decoder_step" else 1]))
    outputs = run_onnxruntime(onnx_path, feeds)
    save_npz(out / f"{name}.input.npz", feeds)
    save_npz(out / f"{name}.expected.npz", {f"output_{i}": o for i, o in enumerate(outputs)})
    finish(name, out, stamp, "exported", start)


def bert_model():
    """A 4-layer encoder (hidden 256, 4 heads, vocabulary 1000) in Hugging Face BERT's form, and
    its inputs: 32 tokens, the last 7 padding, two segments."""
    import math

    import numpy as np
    import torch

    torch.manual_seed(SEED)
    nn = torch.nn

    class SelfAttention(nn.Module):
        def __init__(self, hidden, heads):
            super().__init__()
            self.heads, self.size = heads, hidden // heads
            self.q, self.k, self.v = (nn.Linear(hidden, hidden) for _ in range(3))

        def split(self, x):
            return x.view(x.shape[0], x.shape[1], self.heads, self.size).permute(0, 2, 1, 3)

        def forward(self, x, mask):
            q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.size) + mask
            context = torch.matmul(torch.softmax(scores, dim=-1), v).permute(0, 2, 1, 3)
            return context.contiguous().view(x.shape[0], x.shape[1], -1)

    class Layer(nn.Module):
        def __init__(self, hidden, heads):
            super().__init__()
            self.attention = SelfAttention(hidden, heads)
            self.attention_out = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden, eps=1e-12)
            self.up, self.down = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)
            self.norm2 = nn.LayerNorm(hidden, eps=1e-12)

        def forward(self, x, mask):
            a = self.norm1(self.attention_out(self.attention(x, mask)) + x)
            return self.norm2(self.down(torch.nn.functional.gelu(self.up(a))) + a)

    class Bert(nn.Module):
        def __init__(self, vocab=1000, hidden=256, heads=4, layers=4, positions=128):
            super().__init__()
            self.word, self.position = nn.Embedding(vocab, hidden), nn.Embedding(positions, hidden)
            self.segment = nn.Embedding(2, hidden)
            self.norm = nn.LayerNorm(hidden, eps=1e-12)
            self.layers = nn.ModuleList([Layer(hidden, heads) for _ in range(layers)])

        def forward(self, input_ids, attention_mask, token_type_ids):
            positions = torch.arange(input_ids.shape[1]).unsqueeze(0)
            x = self.norm(self.word(input_ids) + self.position(positions) +
                          self.segment(token_type_ids))
            mask = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
            for layer in self.layers:
                x = layer(x, mask)
            return x

    rng = np.random.RandomState(SEED)
    mask = np.ones((1, 32), np.int64)
    mask[0, 25:] = 0
    segments = np.zeros((1, 32), np.int64)
    segments[0, 16:] = 1
    return Bert(), {"input_ids": rng.randint(0, 1000, (1, 32)).astype(np.int64),
                    "attention_mask": mask, "token_type_ids": segments}


def export_transformer(name, out, stamp):
    import torch
    from onnxruntime.transformers import optimizer

    if cached(name, out, stamp):
        return
    start = time.monotonic()
    model, feeds = bert_model()
    model.eval()
    plain = out / f"{name}.unoptimized.onnx"
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    write_atomically(plain, lambda tmp: torch.onnx.export(
        model, args, tmp, opset_version=OPSET, input_names=list(feeds), output_names=["output"]))
    optimized = optimizer.optimize_model(str(plain), model_type="bert", num_heads=4,
                                         hidden_size=256, opt_level=0)
    fused = {n.op_type for n in optimized.model.graph.node}
    if not {"Attention", "SkipLayerNormalization", "EmbedLayerNormalization"} <= fused:
        raise SystemExit(f"export_models: the transformer optimizer fused only {sorted(fused)}")
    write_atomically(out / f"{name}.onnx", lambda tmp: optimized.save_model_to_file(tmp))
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(plain), options, providers=["CPUExecutionProvider"])
    save_npz(out / f"{name}.input.npz", feeds)
    save_npz(out / f"{name}.expected.npz",
             {f"output_{i}": o for i, o in enumerate(session.run(None, feeds))})
    finish(name, out, stamp, "exported and optimized", start)


def export_network(name, out, stamp):
    import numpy as np
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import family_networks

    if cached(name, out, stamp):
        return
    start = time.monotonic()
    torch.manual_seed(SEED)
    builder, shape = family_networks.NETWORKS[name]
    model = builder().eval()
    onnx_path = out / f"{name}.onnx"
    with torch.no_grad():
        write_atomically(onnx_path, lambda tmp: torch.onnx.export(
            model, torch.zeros(shape), tmp, opset_version=OPSET, input_names=[INPUT_NAME],
            output_names=["output"]))
    feeds = {INPUT_NAME: np.random.RandomState(SEED).standard_normal(shape).astype(np.float32)}
    outputs = run_onnxruntime(onnx_path, feeds)
    save_npz(out / f"{name}.input.npz", feeds)
    save_npz(out / f"{name}.expected.npz", {f"output_{i}": o for i, o in enumerate(outputs)})
    finish(name, out, stamp, "exported", start)


def export_detection(name, out, stamp):
    import numpy as np
    import torch
    import torchvision

    if cached(name, out, stamp):
        return
    start = time.monotonic()
    torch.manual_seed(SEED)
    model = getattr(torchvision.models.detection, name)(weights=None, weights_backbone=None)
    model.eval()
    for head in (model, getattr(model, "roi_heads", None)):
        for attr in ("score_thresh", "box_score_thresh"):
            if head is not None and hasattr(head, attr):
                setattr(head, attr, 0.01)
    image = torch.rand(3, DETECTION_SIZE, DETECTION_SIZE, generator=torch.Generator().manual_seed(SEED))
    onnx_path = out / f"{name}.onnx"
    with torch.no_grad():
        write_atomically(onnx_path, lambda tmp: torch.onnx.export(
            model, ([image],), tmp, opset_version=OPSET, input_names=["image"]))
    feeds = {"image": image.numpy()}
    outputs = run_onnxruntime(onnx_path, feeds)
    if outputs[0].shape[0] == 0:
        raise SystemExit(f"export_models: {name} finds no box; the comparison would be vacuous")
    save_npz(out / f"{name}.input.npz", feeds)
    save_npz(out / f"{name}.expected.npz", {f"output_{i}": o for i, o in enumerate(outputs)})
    finish(name, out, stamp, "exported", start)


def gpt_decoder_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpt_decoder", GPT_DECODER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def export_decoder(name, out, stamp):
    """Both decoder graphs come from one export; each name gets its own inputs and stamp."""
    import shutil
    import tempfile

    import numpy as np

    if cached(name, out, stamp):
        return
    start = time.monotonic()
    gpt = gpt_decoder_module()
    vocab, width, heads, layers, _ = gpt.SIZES["small"]
    with tempfile.TemporaryDirectory() as tmp:
        graphs = dict(zip(["gpt_prefill", "gpt_decode"], gpt.export(tmp, "small", opset=OPSET)))
        write_atomically(out / f"{name}.onnx", lambda t: shutil.copyfile(graphs[name], t))
    onnx_path = out / f"{name}.onnx"
    rng = np.random.RandomState(SEED)
    if name == "gpt_prefill":
        runs = {"": {"input_ids": rng.randint(0, vocab, (1, PREFILL_LENGTH)).astype(np.int64)}}
    else:
        past_names, _ = gpt.names(layers)
        runs = {}
        for length in DECODE_PAST_LENGTHS:
            feeds = {"input_ids": rng.randint(0, vocab, (1, 1)).astype(np.int64)}
            for past in past_names:
                feeds[past] = rng.standard_normal((1, heads, length, width // heads)).astype(np.float32)
            runs[f".past{length}"] = feeds
    for suffix, feeds in runs.items():
        outputs = run_onnxruntime(onnx_path, feeds)
        save_npz(out / f"{name}{suffix}.input.npz", feeds)
        save_npz(out / f"{name}{suffix}.expected.npz", {f"output_{i}": o for i, o in enumerate(outputs)})
    finish(name, out, stamp, "exported", start)


def export_one(name, out, stamp):
    import numpy as np
    import onnx

    if name in NETWORK_MODELS:
        return export_network(name, out, stamp)
    if name in INT8_MODELS:
        return export_int8(name, out, stamp)
    if name in RECURRENT_MODELS:
        return export_recurrent(name, out, stamp)
    if name in TRANSFORMER_MODELS:
        return export_transformer(name, out, stamp)
    if name in DETECTION_MODELS:
        return export_detection(name, out, stamp)
    if name in DECODER_MODELS:
        return export_decoder(name, out, stamp)
    if cached(name, out, stamp):
        return
    start = time.monotonic()
    onnx_path = out / f"{name}.onnx"
    model = build_model(name)
    export_onnx(model, onnx_path)
    input_names = [i.name for i in onnx.load(str(onnx_path), load_external_data=False).graph.input]
    if input_names != [INPUT_NAME]:
        raise SystemExit(f"export_models: {name} has inputs {input_names}, expected [{INPUT_NAME!r}]")
    feeds = {INPUT_NAME: seeded_input()}
    outputs = run_onnxruntime(onnx_path, feeds)
    for i, o in enumerate(outputs):
        # The tests measure error relative to the largest magnitude; an
        # all-zero output would make that check pass for any result.
        if not np.isfinite(o).all() or np.abs(o).max() == 0:
            raise SystemExit(f"export_models: output {i} of {name} is all zero or not finite")
    save_npz(out / f"{name}.input.npz", feeds)
    save_npz(out / f"{name}.expected.npz", {f"output_{i}": o for i, o in enumerate(outputs)})
    if name in CHECKED_MODELS:
        save_checks(name, out, onnx_path, model)
    finish(name, out, stamp, "exported", start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--build-dir",
        default=str(Path(__file__).resolve().parents[2] / "build"),
        help="build tree whose model-cache/ holds the models unless $ANVIL_MODEL_CACHE is set",
    )
    parser.add_argument("models", nargs="*", default=MODELS, help="models to export (default: all)")
    args = parser.parse_args()
    unknown = sorted(set(args.models) - set(KNOWN_MODELS))
    if unknown:
        parser.error(f"unknown models {unknown}; known: {KNOWN_MODELS}")

    out = cache_dir(args.build_dir)
    out.mkdir(parents=True, exist_ok=True)
    # Two build trees may share one cache; the lock keeps them from exporting
    # the same model at once.
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = stamp_text()
        for name in args.models:
            export_one(name, out, stamp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
