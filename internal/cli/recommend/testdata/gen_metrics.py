#!/usr/bin/env python3
"""Writes from.metrics and to.metrics: two saved /metrics texts of a kube-apiserver 5 minutes
apart (300 s = 3e11 ns of demand), in the format and with the families kube-apiserver 1.29+
publishes. apf-batch is under pressure (demand p95 1.925 x nominal, 10% rejected), apf-web
slack (p95 0.4 x nominal), apf-reports inside the dead band (p95 0.775 x nominal); the other
levels are kube-apiserver's own. Rerun after changing it: python3 gen_metrics.py"""

NS = 300e9  # the window, in nanoseconds
DEMAND_BOUNDS = [0.2, 0.4, 0.6, 0.8, 1, 1.2, 1.4, 1.7, 2, 2.8, 4, 6]
WAIT_BOUNDS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30]

# level: nominal seats, {demand bucket upper bound: fraction of the window}, high watermark
LEVELS = {
    "apf-batch": (10, {1: .05, 1.2: .15, 1.4: .30, 1.7: .30, 2: .20}, 22),
    "apf-web": (20, {0.2: .70, 0.4: .25, 0.6: .05}, 11),
    "apf-reports": (10, {0.4: .20, 0.6: .40, 0.8: .40}, 8),
    "global-default": (10, {0.2: 1.0}, 1),
    "workload-low": (50, {0.2: .9, 0.4: .1}, 12),
    "system": (15, {0.2: 1.0}, 2),
    "leader-election": (5, {0.2: 1.0}, 1),
    "node-high": (20, {0.2: 1.0}, 3),
    "workload-high": (20, {0.2: .8, 0.4: .2}, 6),
    "catch-all": (3, {0.2: 1.0}, 0),
}
# (level, flow schema): dispatched and queue-full rejections in the window, wait p99-ish bucket
FLOWS = {
    ("apf-batch", "apf-batch-jobs"): (3600, 400, 2),
    ("apf-web", "apf-web-frontend"): (9000, 0, 0.02),
    ("apf-reports", "apf-reports-nightly"): (1200, 0, 0.1),
    ("workload-low", "service-accounts"): (5000, 0, 0.005),
    ("global-default", "global-default"): (300, 0, 0),
}


def demand_lines(before):
    """The demand histogram; before = the prior hour's share of the counts."""
    out = ["# HELP apiserver_flowcontrol_demand_seats [ALPHA] Observations, at the end of every nanosecond, of (the number of seats each priority level could use) / (nominal number of seats for that level)",
           "# TYPE apiserver_flowcontrol_demand_seats histogram"]
    for level, (_, dist, _) in LEVELS.items():
        total, cum = 0.0, 0.0
        scale = NS * (12 if before else 13)  # an hour of equal demand before, plus the window
        for b in DEMAND_BOUNDS:
            cum += dist.get(b, 0)
            out.append(f'apiserver_flowcontrol_demand_seats_bucket{{priority_level="{level}",le="{b}"}} {int(round(cum * scale))}')
        out.append(f'apiserver_flowcontrol_demand_seats_bucket{{priority_level="{level}",le="+Inf"}} {int(round(scale))}')
        out.append(f'apiserver_flowcontrol_demand_seats_sum{{priority_level="{level}"}} {scale * 0.5:.0f}')
        out.append(f'apiserver_flowcontrol_demand_seats_count{{priority_level="{level}"}} {int(round(scale))}')
    return out


def gauge(name, help_, values):
    out = [f"# HELP {name} [ALPHA] {help_}", f"# TYPE {name} gauge"]
    out += [f'{name}{{priority_level="{l}"}} {v}' for l, v in values.items()]
    return out


def flows(before):
    k = 12 if before else 13
    out = ["# HELP apiserver_flowcontrol_dispatched_requests_total [STABLE] Number of requests executed by API Priority and Fairness subsystem",
           "# TYPE apiserver_flowcontrol_dispatched_requests_total counter"]
    for (l, fs), (d, _, _) in FLOWS.items():
        out.append(f'apiserver_flowcontrol_dispatched_requests_total{{flow_schema="{fs}",priority_level="{l}"}} {d * k}')
    out += ["# HELP apiserver_flowcontrol_rejected_requests_total [STABLE] Number of requests rejected by API Priority and Fairness subsystem",
            "# TYPE apiserver_flowcontrol_rejected_requests_total counter"]
    for (l, fs), (_, r, _) in FLOWS.items():
        if r:
            out.append(f'apiserver_flowcontrol_rejected_requests_total{{flow_schema="{fs}",priority_level="{l}",reason="queue-full"}} {r * k}')
    out += ["# HELP apiserver_flowcontrol_request_wait_duration_seconds [STABLE] Length of time a request spent waiting in its queue",
            "# TYPE apiserver_flowcontrol_request_wait_duration_seconds histogram"]
    for (l, fs), (d, r, p99) in FLOWS.items():
        n = (d + r) * k
        for b in WAIT_BOUNDS:
            # 98% of requests wait at most 0; the rest spread up to p99's bucket.
            c = n if b >= p99 else int(n * 0.98)
            out.append(f'apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute="true",flow_schema="{fs}",priority_level="{l}",le="{b}"}} {c}')
        out.append(f'apiserver_flowcontrol_request_wait_duration_seconds_bucket{{execute="true",flow_schema="{fs}",priority_level="{l}",le="+Inf"}} {n}')
        out.append(f'apiserver_flowcontrol_request_wait_duration_seconds_sum{{execute="true",flow_schema="{fs}",priority_level="{l}"}} {n * p99 / 50:.3f}')
        out.append(f'apiserver_flowcontrol_request_wait_duration_seconds_count{{execute="true",flow_schema="{fs}",priority_level="{l}"}} {n}')
    return out


def text(before):
    nominal = {l: v[0] for l, v in LEVELS.items()}
    nominal["exempt"] = 0
    lines = ["# HELP apiserver_request_total [STABLE] Counter of apiserver requests (not APF: ignored)",
             "# TYPE apiserver_request_total counter", 'apiserver_request_total{code="200",verb="GET"} 12345']
    lines += gauge("apiserver_flowcontrol_nominal_limit_seats", "Nominal number of execution seats configured for each priority level", nominal)
    lines += gauge("apiserver_flowcontrol_current_limit_seats", "current derived number of execution seats available to each priority level", nominal)
    lines += demand_lines(before)
    lines += gauge("apiserver_flowcontrol_demand_seats_high_watermark", "High watermark, over last adjustment period, of demand_seats",
                   {l: v[2] for l, v in LEVELS.items()})
    lines += flows(before)
    return "\n".join(lines) + "\n"


open("from.metrics", "w").write(text(True))
open("to.metrics", "w").write(text(False))
