"""Control flow: `Loop` and `Scan` become Python loops whose body is the subgraph's code, with
the body's inputs bound to the loop's variables (outer values stay visible, as in ONNX)."""

from __future__ import annotations

from burn.onnx.codegen import Context, emit, emitter
from burn.onnx.graph import Node, graph_from_proto
from burn.onnx.passes import fold_constants


def emit_body(
    ctx: Context, proto, bindings: dict[str, str], ranks: dict[str, int | None] | None = None
) -> list[str]:
    """Emit a subgraph at the current indent with its inputs bound to `bindings` (name ->
    Python expression, with the ranks in `ranks` where known); returns expressions for its
    outputs. Names bound inside stay inside."""
    sub = graph_from_proto(proto, ctx.graph.source, ctx.graph.opset, ctx.graph.values)
    fold_constants(sub)
    saved_consts = ctx.graph.constants
    ctx.graph.constants = {**saved_consts, **sub.constants}
    for info in proto.input:
        ctx.bind(info.name, bindings[info.name], (ranks or {}).get(info.name))
    for inner in sub.nodes:
        emit(inner, ctx)
    results = [ctx.x(out.name) for out in sub.outputs]
    ctx.graph.constants = saved_consts
    return results


def _scoped(ctx: Context):
    return dict(ctx.names), dict(ctx.ranks)


@emitter("Loop")
def loop(node: Node, ctx: Context) -> None:
    body = node.attr("body")
    n_carried = len(node.inputs) - 2
    carried = [ctx.fresh("loop_state") for _ in range(n_carried)]
    scans = [ctx.fresh("loop_scan") for _ in range(len(node.outputs) - n_carried)]
    step, running = ctx.fresh("loop_step"), ctx.fresh("loop_running")
    limit = ctx.x(node.inputs[0]) if node.inputs[0] else None
    ctx.line(f"{step} = 0", f"Loop {node.name}")
    ctx.line(
        f"{running} = True"
        if not node.inputs[1]
        else f"{running} = bool({ctx.x(node.inputs[1])}.any())"
    )
    for var, name in zip(carried, node.inputs[2:], strict=True):
        ctx.line(f"{var} = {ctx.x(name)}")
    for var in scans:
        ctx.line(f"{var} = []")
    bound = f"{step} < int(rt.as_scalar({limit}))" if limit else "True"
    ctx.line(f"while {running} and {bound}:")
    saved = _scoped(ctx)
    ctx.indent += "    "
    ctx.uses_device = True
    names = [i.name for i in body.input]
    counter = ctx.fresh("loop_index")
    ctx.line(f"{counter} = rt.const([{step}], 'i64', device)")
    bindings = {names[0]: counter, names[1]: f"rt.const([{running}], 'bool', device)"}
    bindings.update(dict(zip(names[2:], carried, strict=True)))
    # A carried value keeps its rank from one iteration to the next.
    carried_ranks = {n: ctx.rank(v) for n, v in zip(names[2:], node.inputs[2:], strict=True)}
    results = emit_body(ctx, body, bindings, carried_ranks)
    # What the body's scan outputs are known to be, for when the Loop's own outputs are not.
    item_ranks = [ctx.rank(out.name) for out in body.output[1 + n_carried :]]
    ctx.line(f"{running} = bool({results[0]}.any())")
    if carried:
        ctx.line(f"{', '.join(carried)} = {', '.join(results[1 : 1 + n_carried])}")
    for var, res in zip(scans, results[1 + n_carried :], strict=True):
        ctx.line(f"{var}.append({res})")
    ctx.line(f"{step} += 1")
    ctx.indent = ctx.indent[:-4]
    ctx.names, ctx.ranks = saved
    for i, var in enumerate(carried):
        ctx.bind(node.outputs[i], var, ctx.graph.info(node.outputs[i]).rank)
    for j, var in enumerate(scans):
        out = node.outputs[n_carried + j]
        stacked = ctx.fresh("loop_out")
        rank = ctx.graph.info(out).rank
        scalar = rank == 1 if rank is not None else item_ranks[j] == 0
        ctx.line(f"{stacked} = rt.stack_scan({var}, scalars={scalar})")
        ctx.bind(out, stacked, ctx.graph.info(out).rank)


@emitter("Scan")
def scan(node: Node, ctx: Context) -> None:
    if ctx.graph.opset < 9:
        _scan_batch_major(node, ctx)
        return
    body = node.attr("body")
    n_scan = int(node.attr("num_scan_inputs"))
    n_state = len(node.inputs) - n_scan
    in_axes = list(node.attr("scan_input_axes", [0] * n_scan))
    in_dirs = list(node.attr("scan_input_directions", [0] * n_scan))
    n_out = len(node.outputs) - n_state
    out_axes = list(node.attr("scan_output_axes", [0] * n_out))
    out_dirs = list(node.attr("scan_output_directions", [0] * n_out))
    states = [ctx.fresh("scan_state") for _ in range(n_state)]
    collected = [ctx.fresh("scan_items") for _ in range(n_out)]
    for var, name in zip(states, node.inputs[:n_state], strict=True):
        ctx.line(f"{var} = {ctx.x(name)}", f"Scan {node.name}")
    for var in collected:
        ctx.line(f"{var} = []")
    sequences = [ctx.x(n) for n in node.inputs[n_state:]]
    ranks = [ctx.rank(n) for n in node.inputs[n_state:]]
    axes = [a % r if r else a for a, r in zip(in_axes, ranks, strict=True)]
    length = ctx.fresh("scan_length")
    ctx.line(f"{length} = {sequences[0]}.dims()[{axes[0]}]")
    _scan_steps(ctx, body, length, states, collected, sequences, axes, in_dirs)
    for i, var in enumerate(states):
        ctx.bind(node.outputs[i], var, ctx.graph.info(node.outputs[i]).rank)
    for j, var in enumerate(collected):
        out = node.outputs[n_state + j]
        stacked = ctx.fresh("scan_out")
        scalar = ctx.graph.info(out).rank == 1
        reverse = bool(out_dirs[j])
        ctx.line(f"{stacked} = rt.stack_scan({var}, {out_axes[j]}, {reverse}, scalars={scalar})")
        ctx.bind(out, stacked, ctx.graph.info(out).rank)


def _scan_steps(ctx, body, count, states, collected, sequences, axes, directions) -> None:
    """The loop both Scans share: `count` steps, each binding the body's inputs to the state
    variables and to slice `step` (from the end where a direction is 1) of each sequence
    along its axis, then updating the states and appending the scan outputs to `collected`."""
    step = ctx.fresh("scan_step")
    ctx.line(f"for {step} in range({count}):")
    saved = _scoped(ctx)
    ctx.indent += "    "
    names = [i.name for i in body.input]
    bindings = dict(zip(names[: len(states)], states, strict=True))
    for k, (seq, axis, direction) in enumerate(zip(sequences, axes, directions, strict=True)):
        index = f"{count} - 1 - {step}" if direction else step
        item = ctx.fresh("scan_slice")
        ctx.line(f"{item} = rt.take({seq}, {axis}, {index})")
        bindings[names[len(states) + k]] = item
    results = emit_body(ctx, body, bindings)
    if states:
        ctx.line(f"{', '.join(states)} = {', '.join(results[: len(states)])}")
    for var, res in zip(collected, results[len(states) :], strict=True):
        ctx.line(f"{var}.append({res})")
    ctx.indent = ctx.indent[:-4]
    ctx.names, ctx.ranks = saved


def _scan_batch_major(node: Node, ctx: Context) -> None:
    """Opset-8 Scan: inputs `(sequence_lens, states..., scans...)` with a batch axis 0 and the
    scan axis 1; each batch entry is scanned on its own (as far as its sequence length, the
    outputs padded with zeros to the longest), and the results are stacked along the batch."""
    body = node.attr("body")
    n_scan = int(node.attr("num_scan_inputs"))
    n_state = len(node.inputs) - 1 - n_scan
    directions = list(node.attr("directions", [0] * n_scan))
    n_out = len(node.outputs) - n_state
    sequences = [ctx.x(n) for n in node.inputs[1 + n_state :]]
    batch, longest = ctx.fresh("scan_batch"), ctx.fresh("scan_longest")
    ctx.line(f"{batch}, {longest} = {sequences[0]}.dims()[:2]", f"Scan {node.name} (opset 8)")
    lengths = ctx.fresh("scan_lengths") if node.inputs[0] else None
    if lengths:
        ctx.line(f"{lengths} = rt.as_ints({ctx.x(node.inputs[0])})")
    finals = [ctx.fresh("scan_finals") for _ in range(n_state)]
    stacked = [ctx.fresh("scan_entries") for _ in range(n_out)]
    for var in finals + stacked:
        ctx.line(f"{var} = []")
    entry = ctx.fresh("scan_entry")
    ctx.line(f"for {entry} in range({batch}):")
    ctx.indent += "    "
    states = [ctx.fresh("scan_state") for _ in range(n_state)]
    for var, name in zip(states, node.inputs[1 : 1 + n_state], strict=True):
        ctx.line(f"{var} = rt.take({ctx.x(name)}, 0, {entry})")
    rows = [ctx.fresh("scan_rows") for _ in sequences]
    for var, seq in zip(rows, sequences, strict=True):
        ctx.line(f"{var} = rt.take({seq}, 0, {entry})")
    count = ctx.fresh("scan_count")
    ctx.line(f"{count} = {lengths}[{entry}]" if lengths else f"{count} = {longest}")
    collected = [ctx.fresh("scan_items") for _ in range(n_out)]
    for var in collected:
        ctx.line(f"{var} = []")
    _scan_steps(ctx, body, count, states, collected, rows, [0] * len(rows), directions)
    for var, state in zip(finals, states, strict=True):
        ctx.line(f"{var}.append({state})")
    for j, (var, items) in enumerate(zip(stacked, collected, strict=True)):
        scalar = ctx.graph.info(node.outputs[n_state + j]).rank == 2  # 0-d items
        ctx.line(f"{var}.append(rt.stack_scan({items}, scalars={scalar}))")
    ctx.indent = ctx.indent[:-4]
    for i, var in enumerate(finals):
        out, result = node.outputs[i], ctx.fresh("scan_out")
        scalar = ctx.graph.info(out).rank == 1
        ctx.line(f"{result} = rt.stack_batch({var}, scalars={scalar})")
        ctx.bind(out, result, ctx.graph.info(out).rank)
    for j, var in enumerate(stacked):
        out, result = node.outputs[n_state + j], ctx.fresh("scan_out")
        ctx.line(f"{result} = rt.stack_batch({var}, {longest})")
        ctx.bind(out, result, ctx.graph.info(out).rank)


@emitter("SequenceMap")
def sequence_map(node: Node, ctx: Context) -> None:
    body = node.attr("body")
    inputs = [ctx.x(n) for n in node.inputs]
    collected = [ctx.fresh("map_items") for _ in node.outputs]
    for var in collected:
        ctx.line(f"{var} = []", f"SequenceMap {node.name}")
    step = ctx.fresh("map_step")
    ctx.line(f"for {step} in range(len({inputs[0]})):")
    saved = _scoped(ctx)
    ctx.indent += "    "
    names = [i.name for i in body.input]
    bindings = {}
    for name, source in zip(names, inputs, strict=True):
        var = ctx.fresh("map_input")
        ctx.line(f"{var} = rt.item({source}, {step})")
        bindings[name] = var
    results = emit_body(ctx, body, bindings)
    for var, res in zip(collected, results, strict=True):
        ctx.line(f"{var}.append({res})")
    ctx.indent = ctx.indent[:-4]
    ctx.names, ctx.ranks = saved
    for out, var in zip(node.outputs, collected, strict=True):
        ctx.bind(out, var, None)


_TRAINING = {"Momentum": "rt.momentum_step", "Adagrad": "rt.adagrad_step", "Adam": "rt.adam_step"}


@emitter(*(f"ai.onnx.preview.training:{op}" for op in _TRAINING))
def training_step(node: Node, ctx: Context) -> None:
    from burn.onnx.emitters.common import attr_args

    args = [ctx.x(n) for n in node.inputs] + ([attr_args(node)] if node.attrs else [])
    ctx.assign_many(node, f"{_TRAINING[node.op_type]}({', '.join(args)})")


@emitter("ai.onnx.preview:FlexAttention")
def flex_attention(node: Node, ctx: Context) -> None:
    """Scores, the score_mod graph inline, softmax, the prob_mod graph inline, values."""
    q, k, v = (ctx.x(n) for n in node.inputs[:3])
    scores, values = ctx.fresh("flex_scores"), ctx.fresh("flex_values")
    scale = node.attr("scale")
    ctx.line(
        f"{scores}, {values} = rt.flex_scores({q}, {k}, {v}, {scale!r})",
        f"FlexAttention {node.name}",
    )
    for key in ("score_mod", "prob_mod"):
        if key == "prob_mod":
            probs = ctx.fresh("flex_probs")
            ctx.line(f"{probs} = rt.softmax_last({scores})")
            scores = probs
        mod = node.attr(key)
        if mod is not None:
            saved = _scoped(ctx)
            (result,) = emit_body(ctx, mod, {mod.input[0].name: scores})
            ctx.names, ctx.ranks = saved
            scores = result
    ctx.assign(node, f"rt.matmul({scores}, {values})")
