"""Each example of examples/python runs and checks its own result (exit status 0)."""

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(os.environ.get(
    "ANVIL_EXAMPLES_DIR", pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"))


def run_example(name, *args, cwd):
    proc = subprocess.run([sys.executable, str(EXAMPLES / name), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{name} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_quickstart_in_a_fresh_venv_with_numpy_only(tmp_path):
    """The README's promise: after pip install, a virtualenv holding only numpy and anvil runs
    the quick start."""
    wheel = os.environ.get("ANVIL_WHEEL")
    if not wheel:
        raise RuntimeError("ANVIL_WHEEL names the wheel under test (scripts/test-python sets it)")
    venv = tmp_path / "venv"
    subprocess.run(["/usr/bin/python3", "-m", "venv", str(venv)], check=True)
    numpy_pin = os.environ.get("ANVIL_NUMPY_REQUIREMENT", "numpy")
    subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                    numpy_pin, wheel], check=True)
    listed = subprocess.run([str(venv / "bin" / "pip"), "list", "--format=freeze"],
                            capture_output=True, text=True, check=True).stdout
    names = {line.split("==")[0].lower() for line in listed.splitlines()}
    assert names - {"pip", "setuptools"} == {"numpy", "anvil"}, names
    proc = subprocess.run([str(venv / "bin" / "python"), str(EXAMPLES / "quickstart.py"),
                           str(tmp_path / "out")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"quickstart failed:\n{proc.stdout}\n{proc.stderr}"
    out = proc.stdout
    assert "max |in-memory - loaded|" in out
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {
        "deploy_lib.so", "deploy_graph.json", "deploy_param.params"}


def test_onnx_tutorial(tmp_path, model_cache):
    out = run_example("onnx_tutorial.py", model_cache / "resnet18.onnx", cwd=tmp_path)
    assert "top-1: anvil" in out


def test_mlc_lesson(tmp_path):
    out = run_example("mlc_lesson.py", cwd=tmp_path)
    assert "max |anvil - numpy|" in out


def test_tvmc_flow(tmp_path, model_cache):
    out = run_example("tvmc_flow.py", model_cache / "squeezenet1_1.onnx", tmp_path / "w",
                      cwd=tmp_path)
    assert "max |anvil - ONNX Runtime|" in out
    assert (tmp_path / "w" / "records.json").stat().st_size > 0


def test_generation(tmp_path, model_cache):
    """examples/generation: greedy decoding with the KV cache, anvil beside ONNX Runtime (the
    example exits non-zero when the two choose different tokens)."""
    script = EXAMPLES.parent / "generation" / "generate.py"
    proc = subprocess.run([sys.executable, str(script), str(model_cache), "--tokens", "8",
                           "--prompt-length", "5"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, f"generate.py failed:\n{proc.stdout}\n{proc.stderr}"
    assert "anvil" in proc.stdout and "onnxruntime" in proc.stdout and "tokens/s" in proc.stdout
