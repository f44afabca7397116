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


def _time_split_lines(sim_time: dict) -> list[str]:
    """Return the summary's line splitting each phase's simulated time (seconds) into downlink,
    computation, uplink and waiting (``sim_time_s.by_direction``); none for a phase of no time."""
    split = sim_time.get("by_direction") or {}
    parts = []
    for phase, label in (("phase1", "phase I"), ("phase2", "phase II")):
        s = split.get(phase)
        if s and sim_time.get(phase):
            times = " / ".join(
                f"{s[k]:.3f}" for k in ("downlink", "computation", "uplink", "waiting")
            )
            parts.append(f"{label} {times} s")
    if not parts:
        return []
    return [f"  time split    down / compute / up / waiting: {'; '.join(parts)}"]


def _payment_error_lines(result: dict) -> list[str]:
    """Return the payment error estimate's lines (FFL): its parts, and a warning when Phase I's
    gap is the largest part and above ``mechanism.epsilon``; [] when the mechanism has none.

    The estimate covers |P_k - P_k^VCG| in loss units (``mechanism_info``; derived in
    :mod:`edgesim.mechanisms.payment_error`); each part is its own maximum over the agents.
    """
    info = result.get("mechanism_info") or {}
    total = info.get("payment_error_estimate_max")
    if total is None:
        return []
    gap = info.get("payment_phase1_error_max")
    trunc = info.get("payment_truncation_error_max")
    disc = info.get("payment_discretisation_error_max")
    lines = [
        f"  payments      error estimate {total:.1e} (Phase I gap {_fmt(gap, '.1e')},"
        f" Phase II truncation {_fmt(trunc, '.1e')}, discretisation {_fmt(disc, '.1e')});"
        " it assumes truthful reports"  # a misreport moves P from VCG of the true data
    ]
    mech = result["scenario"].get("mechanism") or {}
    epsilon = mech.get("epsilon")
    others = max((x for x in (trunc, disc) if x is not None), default=0.0)
    if gap is not None and gap >= others and epsilon is not None and gap > epsilon:
        T1 = result["iterations"]["phase1"]
        if mech.get("phase1_rounds") == "theory":
            fix = f'set mechanism.phase1_rounds above the {T1} rounds "theory" gave'
        else:
            fix = f'raise mechanism.phase1_rounds (now {T1}) or set it to "theory"'
        lines.append(
            f"  payments      WARNING: Phase I stopped short of the optimum; its gap dominates"
            f" the payment error ({gap:.1e} > epsilon {epsilon:g}): {fix}"
        )
    return lines


def _columns_line(meta: dict) -> str:
    """Return the per-agent sidecar's line: where it is and the quantiles of the payments."""
    where = f"in {meta['file']}" if meta.get("file") else "not written (give --json FILE)"
    if meta.get("format") == "none":
        where = "not kept (output.per_agent = 'none')"
    pay = (meta.get("summary") or {}).get("payment") or {}
    q = ", ".join(f"{k} {_fmt(pay.get(k), '.4g')}" for k in ("min", "median", "q99", "max"))
    return f"  agents        {meta.get('rows')} per-agent rows {where}; payments {q}"


def _e2_text(e2: dict) -> str:
    """Return E2's verdict after its label: the best deviation found and its regret vs the bound."""
    params = ", ".join(
        f"{k}={_fmt(v, '.4g') if isinstance(v, (int, float)) or v is None else v}"
        for k, v in (e2.get("parameters") or {}).items()
    )
    found = (
        f"agent {e2.get('agent')}'s best {e2.get('family')}({params}) gains"
        f" {_fmt(e2.get('regret'), '.3g')} ({e2.get('objective_kind')})"
    )
    if e2.get("holds") is None:
        return f"not known: {found}; {e2.get('reason')}"
    verdict, sign = ("holds", "<=") if e2["holds"] else ("FAILS", ">")
    return f"{verdict}: {found} {sign} bound {_fmt(e2.get('bound'), '.3g')}"


def _e3_text(e3: dict, K: int) -> str:
    """Return E3's verdict after its label: how many agents fail, which, and by how much."""
    tol = f"{_fmt(e3.get('tolerance'), '.0e')} ({e3.get('tolerance_source')})"
    count = e3.get("failing_count")
    if e3.get("holds") is None and not count:
        return f"not checked: {e3.get('reason')}"
    if not count:
        return f"holds: no participant's overall test loss exceeds its local model's by > {tol}"
    shown = e3.get("failing_agents") or []
    ids = ", ".join(str(k) for k in shown) + (", ..." if count > len(shown) else "")
    return (
        f"FAILS for {count} of {K} agents ({ids}): overall test loss (payment + test loss)"
        f" above local learning's by up to {_fmt(e3.get('excess_max'), '.3g')} > {tol}"
    )


def _economics_lines(result: dict) -> list[str]:
    """Return one line per property E1-E4 of the paper (the JSON's ``economics``) saying
    whether it holds; [] for a result without the section."""
    econ = result.get("economics")
    if not econ:
        return []
    lines = []
    e1 = econ.get("E1") or {}
    tol = f"{_fmt(e1.get('tolerance'), '.0e')} ({e1.get('tolerance_source')})"
    if e1.get("holds") is None:
        lines.append(f"  E1 efficiency not checked: {e1.get('reason')}")
    elif e1["holds"]:
        lines.append(
            f"  E1 efficiency holds: F(w*) - F(w^o) = {_fmt(e1.get('gap'), '.2e')} <= {tol}"
        )
    else:
        why = e1.get("reason") or f"F(w*) - F(w^o) = {_fmt(e1.get('gap'), '.2e')} > {tol}"
        lines.append(f"  E1 efficiency FAILS: {why}")
    e2 = econ.get("E2") or {}
    if "regret" in e2:
        lines.append(f"  E2 faithful   {_e2_text(e2)}")
    else:
        lines.append(f"  E2 faithful   not checked: {e2.get('reason')}")
    lines.append(f"  E3 voluntary  {_e3_text(econ.get('E3') or {}, result['K'])}")
    e4 = econ.get("E4") or {}
    total = _fmt(e4.get("budget_total"), ".4g")
    if e4.get("holds") is None:
        lines.append(f"  E4 budget     not checked: {e4.get('reason')}")
    elif e4["holds"]:
        lines.append(f"  E4 budget     holds: the payments sum to {total} >= 0")
    else:
        lines.append(
            f"  E4 budget     FAILS: the payments sum to {total} < 0 (the server pays out)"
        )
    return lines


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
    reference = m.get("exact_vcg") or {}
    if reference.get("computed") is False and sc["mechanism"]["exact_vcg"] == "auto":
        lines.append(f"  exact VCG     {reference.get('reason')}")  # why 'auto' skipped it
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
        lines += _time_split_lines(t)
    pays = result.get("payments")
    if pays is None:  # per-agent results in a sidecar: the JSON has their summary
        pays_s = ((result.get("per_agent") or {}).get("summary") or {}).get("payment") or {}
        nonzero = pays_s.get("count", 0) < result["K"] or pays_s.get("max") or pays_s.get("min")
    else:
        nonzero = any(x is None or x != 0 for x in pays)
    if nonzero:
        err = result.get("payment_error_max")
        err_s = f", max |P - P_VCG| = {err:.3e}" if err is not None else ""
        info = result.get("mechanism_info") or {}
        disc = info.get("payment_discretisation_error_max")
        disc_s = ""
        if disc is not None and "payment_error_estimate_max" not in info:  # else: the breakdown
            disc_s = f", discretisation error estimate {disc:.1e}"
        lines.append(
            f"  payments      total {_fmt(result.get('budget_total'), '.6g')}{err_s}{disc_s}"
        )
        lines += _payment_error_lines(result)
    if "privacy" in result:
        pr = result["privacy"]
        if pr.get("public_constants") is False:
            lines.append(
                f"  privacy       NO privacy claim: L_g, read off the data, sets the step sizes"
                f" (the noise alone would give epsilon {_fmt(pr.get('epsilon_noise_only'), '.4g')},"
                " which that release can break); leave mechanism.public_smoothness 'auto'"
            )
        else:
            lines.append(
                f"  privacy       target alpha {_fmt(pr.get('alpha'), 'g')}, accounted epsilon "
                f"{_fmt(pr.get('epsilon_accounted'), '.4g')} (paper's zCDP conversion "
                f"{_fmt(pr.get('epsilon_zcdp'), '.4g')})"
            )
        if pr.get("sensitivity_enforced") is False:
            lines.append("  privacy       WARNING: clipping is off, so that epsilon is assumed")
    if not result["agents"] and result.get("per_agent"):
        lines.append(_columns_line(result["per_agent"]))
        shown = []
    else:
        shown = result["agents"][:12]
    on_test = any(a.get("test_loss") is not None for a in result["agents"])
    own, overall_key, local_key = (
        ("test_loss", "overall_test_loss", "local_loss")
        if on_test
        else ("train_loss", "overall_loss", "local_train_loss")
    )
    if shown:
        data = "test" if on_test else "training"
        lines.append(
            f"  agent      n  strategy            payment  {own.replace('_', ' '):>10s}  overall"
            f"    local loss  (losses on the {data} set; overall = payment + own loss)"
        )
    for a in shown:
        pay = _fmt(a["payment"], "9.4f", f"{'-':>9s}")
        loss = _fmt(a.get(own), "10.4f", f"{'-':>10s}")
        overall = _fmt(a.get(overall_key), "9.4f", f"{'-':>9s}")
        local = _fmt(a.get(local_key), "10.4f", f"{'-':>10s}")
        lines.append(
            f"  {a['id']:5d} {a['n']:6d}  {a['strategy']:<18s} {pay} {loss} {overall}  {local}"
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
    lines += _economics_lines(result)
    return "\n".join(lines)
