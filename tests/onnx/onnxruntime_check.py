"""Runs ONNX models in ONNX Runtime (CPU execution provider) and compares
their outputs with the expected ones stored beside them.

    python onnxruntime_check.py DIR [DIR ...]

Each DIR holds <name>.json files: {"onnx": "<file>", "cases": [{"input_shape",
"output_shape", "input", "output"}, ...]} with raw little-endian float32
inputs and outputs (what burn's OnnxRuntimeCases test and the PyTorch
fixtures write). Exits 1 when any output differs by more than
1e-5 relative (1e-6 absolute) or a model does not run.
"""
import json
import pathlib
import sys

import numpy as np
import onnxruntime as ort

RTOL, ATOL = 1e-5, 1e-6


def check_dir(directory: pathlib.Path) -> int:
    failures = 0
    manifests = sorted(directory.glob("*.json"))
    if not manifests:
        print(f"{directory}: no cases", file=sys.stderr)
        return 1
    for manifest in manifests:
        spec = json.loads(manifest.read_text())
        model = directory / spec["onnx"]
        options = ort.SessionOptions()
        if spec.get("onnxruntime_optimizations", True) is False:
            # Quantized fixtures: their outputs are the nodes as written; ONNX
            # Runtime's optimizer would fuse them into integer kernels that
            # round differently.
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        except Exception as e:  # ORT refusing the file is a failure, with its reason
            print(f"FAIL {model.name}: ONNX Runtime cannot load it: {e}")
            failures += 1
            continue
        input_name = session.get_inputs()[0].name
        for case in spec["cases"]:
            x = np.fromfile(directory / case["input"], dtype="<f4").reshape(case["input_shape"])
            want = np.fromfile(directory / case["output"], dtype="<f4").reshape(case["output_shape"])
            (got,) = session.run(None, {input_name: x})
            if got.shape != want.shape:
                print(f"FAIL {model.name} batch {case['batch']}: shape {got.shape}, expected {want.shape}")
                failures += 1
                continue
            err = np.abs(got.astype(np.float64) - want.astype(np.float64))
            limit = ATOL + RTOL * np.abs(want.astype(np.float64))
            worst = float(np.max(err / limit)) if err.size else 0.0
            status = "ok  " if worst <= 1.0 else "FAIL"
            print(f"{status} {model.name} batch {case['batch']}: max |diff| {float(err.max()):.3g} "
                  f"({worst:.2f} of the tolerance)")
            failures += worst > 1.0
    return failures


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    print(f"onnxruntime {ort.__version__}, numpy {np.__version__}")
    failures = sum(check_dir(pathlib.Path(d)) for d in sys.argv[1:])
    print("onnxruntime_check:", "passed" if failures == 0 else f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
