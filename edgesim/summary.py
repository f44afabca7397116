"""The human-readable summary of one run that ``edgesim run`` prints (from its JSON result)."""

from __future__ import annotations


def _fmt(value, spec: str, missing: str = "-") -> str:
    """Return ``value`` formatted with ``spec``, or ``missing`` if it is None (NaN or inf)."""
    return missing if value is None else format(value, spec)


def _divergence(result: dict) -> str | None:
    """Return which part of a diverged run diverged, in words; None when the run did not diverge.

    Phase I when the model is not finite (its global loss is None); otherwise the
    participating agents whose payment is None: their Phase II problems diverged.
    """
    if not result.get("diverged"):
        return None
    rounds = result["iterations"]["phase1"]
    if result["model"].get("global_loss") is None:
        return f"Phase I after {rounds} rounds: w* is not finite (no model, no payments)"
    bad = [
        a["id"] for a in result["agents"] if a.get("participates", True) and a["payment"] is None
    ]
    if bad:
        who = ", ".join(str(k) for k in bad)
        if len(bad) == 1:
            return f"Phase II problem of agent {who}: its payment is undefined (null in the JSON)"
        return f"Phase II problems of agents {who}: their payments are undefined (null in the JSON)"
    return "see mechanism_info in the JSON"


def _restarts(result: dict) -> str | None:
    """Return FFL's Phase II restarts (agent, count, final eta2) in words; None if none.

    ``mechanism_info`` lists one value per agent id (null for an agent that opted out).
    """
    info = result.get("mechanism_info") or {}
    counts, etas = info.get("phase2_restarts"), info.get("phase2_eta2_final")
    if not counts or not any(counts):
        return None
    parts = []
    for k, n in enumerate(counts):
        if n:
            eta = _fmt(etas[k], ".3g") if etas and k < len(etas) else "-"
            parts.append(f"agent {k} ({n}x, eta2 now {eta})")
    return "diverged, restarted from w* at a smaller eta2: problem of " + ", ".join(parts)


def _columns_line(meta: dict) -> str:
    """Return the per-agent sidecar's line: where it is and the quantiles of the payments."""
    where = f"in {meta['file']}" if meta.get("file") else "not written (give --json FILE)"
    if meta.get("format") == "none":
        where = "not kept (output.per_agent = 'none')"
    pay = (meta.get("summary") or {}).get("payment") or {}
    q = ", ".join(f"{k} {_fmt(pay.get(k), '.4g')}" for k in ("min", "median", "q99", "max"))
    return f"  agents        {meta.get('rows')} per-agent rows {where}; payments {q}"


def summary(result: dict) -> str:
    """Return a short human-readable summary of one run's result (any field may be None)."""
    lines = []
    sc = result["scenario"]
    name = result.get("name") or "scenario"
    lines.append(
        f"{name}: {result['mechanism']} with K = {result['K']} agents, "
        f"{sc['data']['source']} data, {sc['model']['kind']} model, seed {result['seed']}"
    )
    it = result["iterations"]
    lines.append(f"  rounds        phase I {it['phase1']}, phase II {it['phase2_total']} in total")
    diverged = _divergence(result)
    if diverged:
        lines.append(f"  DIVERGED      {diverged}")
    restarted = _restarts(result)
    if restarted:
        lines.append(f"  phase II      {restarted}")
    capped = (result.get("mechanism_info") or {}).get("phase2_capped")
    if capped:
        who = ", ".join(str(k) for k in capped)
        lines.append(f"  phase II      stopped by mechanism.phase2_max_rounds: agents {who}")
    m = result["model"]
    acc = m.get("test_accuracy")
    acc_s = f", test accuracy {acc:.4f}" if acc is not None else ""
    gap = m.get("optimality_gap")
    gap_s = (
        f" (optimum {_fmt(m.get('optimum_loss'), '.6g')}, gap {gap:.2e})" if gap is not None else ""
    )
    lines.append(f"  model         global loss {_fmt(m.get('global_loss'), '.6g')}{gap_s}{acc_s}")
    c = result["communication"]
    lines.append(
        f"  communication {c['messages_down']} messages down ({c['bytes_down'] / 1e6:.3f} MB), "
        f"{c['messages_up']} up ({c['bytes_up'] / 1e6:.3f} MB)"
    )
    net = result.get("network")
    if net:
        t = result["sim_time_s"]
        lines.append(
            f"  network       {net['fidelity']}: {t['total']:.3f} simulated s (phase I"
            f" {t['phase1']:.3f} s, phase II {t['phase2']:.3f} s); {net['transmissions']}"
            f" transmissions, {net['lost']} lost, {net['cut']} cut by a deadline"
        )
    pays = result.get("payments")
    if pays is None:  # per-agent results in a sidecar: the JSON has their summary
        pays_s = ((result.get("per_agent") or {}).get("summary") or {}).get("payment") or {}
        nonzero = pays_s.get("count", 0) < result["K"] or pays_s.get("max") or pays_s.get("min")
    else:
        nonzero = any(x is None or x != 0 for x in pays)
    if nonzero:
        err = result.get("payment_error_max")
        err_s = f", max |P - P_VCG| = {err:.3e}" if err is not None else ""
        disc = (result.get("mechanism_info") or {}).get("payment_discretisation_error_max")
        disc_s = f", discretisation error estimate {disc:.1e}" if disc is not None else ""
        lines.append(
            f"  payments      total {_fmt(result.get('budget_total'), '.6g')}{err_s}{disc_s}"
        )
    if "privacy" in result:
        pr = result["privacy"]
        lines.append(
            f"  privacy       target alpha {_fmt(pr.get('alpha'), 'g')}, accounted epsilon "
            f"{_fmt(pr.get('epsilon_accounted'), '.4g')} (paper's zCDP conversion "
            f"{_fmt(pr.get('epsilon_zcdp'), '.4g')})"
        )
        if pr.get("sensitivity_enforced") is False:
            lines.append("  privacy       WARNING: clipping is off, so that epsilon is assumed")
        if pr.get("public_constants") is False:
            lines.append(
                "  privacy       WARNING: L_g, read off the data, sets the step sizes; the epsilon"
                " does not cover it (set mechanism.public_smoothness)"
            )
    if not result["agents"] and result.get("per_agent"):
        lines.append(_columns_line(result["per_agent"]))
        shown = []
    else:
        shown = result["agents"][:12]
    if shown:
        lines.append(
            "  agent      n  strategy            payment   train loss  overall    local loss"
        )
    for a in shown:
        pay = _fmt(a["payment"], "9.4f", f"{'-':>9s}")
        train = _fmt(a["train_loss"], "10.4f", f"{'-':>10s}")
        overall = _fmt(a["overall_loss"], "9.4f", f"{'-':>9s}")
        local = _fmt(a["local_loss"], "10.4f", f"{'-':>10s}")
        lines.append(
            f"  {a['id']:5d} {a['n']:6d}  {a['strategy']:<18s} {pay} {train} {overall}  {local}"
        )
    if shown and len(result["agents"]) > len(shown):
        lines.append(f"  ... {len(result['agents']) - len(shown)} more agents in the JSON")
    if "best_response" in result:
        br = result["best_response"]
        lines.append(
            f"  best response agent {br['agent']} ({br['objective_kind']}): "
            f"gamma {_fmt(br['gamma'], '.4g')}, gain over truthful {_fmt(br['gain'], '.4g')}; "
            f"opting out gives {_fmt(br['opt_out'], '.6g')}"
        )
    return "\n".join(lines)
