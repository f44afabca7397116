"""One LTE cell in ns-3: reference completion times for edgesim's cellular model (issue 30).

Run with the ns-3 virtual environment (see README.md), not edgesim's:

    ~/.venvs/ns3/bin/python analysis/validation/ns3_lte.py \
        --rbs 100 --distance 50 --n 10 --bytes 1000000 --mode round --runs 3 --out x.csv

Scenario: one eNB with EPC (PointToPointEpcHelper), FDD (EARFCN 100 / 18100, band 1,
2.1 GHz), ``--rbs`` resource blocks each way (50 = 10 MHz, 100 = 20 MHz), SISO, ns-3's
default powers (eNB 30 dBm, UE 10 dBm; noise figures 5 dB and 9 dB) and path loss (Friis,
no fading: the pip wheel ships no fading traces); N UEs on a circle of radius ``--distance``
metres; ideal RRC; RLC UM with a 1 MiB transmit buffer (``--rlc-buffer``: ns-3's default
of 10 240 B drops TCP's initial window, so every transfer would wait out a 1 s
retransmission timeout); ``RrFfMacScheduler`` or ``PfFfMacScheduler``; a remote host (the
FL server) behind the PGW over a 1 Gbit/s, 1 ms point-to-point link. TCP with ns-3 3.44's
defaults (TcpCubic, initial window 10, 131072 B buffers, delayed ACK, minimum RTO 1 s)
except the segment size, 1448 B; BulkSend / PacketSink applications.

Modes, all times from the traffic start (``--start``, default 1 s, after every UE is
connected):
  downlink  the remote host sends S bytes to every UE at once; a UE is done when its sink
            has S bytes;
  uplink    every UE sends S bytes to the remote host at once;
  round     downlink, and each UE opens its uplink connection and sends S bytes the moment
            its downlink sink has all S bytes (one FedAvg round);
  udp       saturation goodput: UDP floods of 1472-byte datagrams at 1.5x the cell's peak,
            1 s down from the start, then 1 s up from start + 1.5 s; the goodput is what
            the sinks receive over the second half of each flood (columns udp_*_mbps);
  probe     latency only: the remote host sends one 100-byte UDP datagram to each UE at
            the start (downlink one-way delay), and each UE sends one to the remote host
            0.5 s later, from idle (uplink one-way delay: scheduling request, grant, 4 ms).

Recorded per run (CSV row): the last UE's completion, per-UE completion, the UEs' mean
downlink SINR (LteUePhy ReportCurrentCellRsrpSinr), uplink SINR (LteEnbPhy ReportUeSinr),
mean scheduled MCS and transport block size each way (LteEnbMac DlScheduling /
UlScheduling), the first RTT sample of each TCP sender, TCP retransmission timeouts
(congestion state entering CA_LOSS) and fast recoveries, and the RLC's TxDrop trace events
(in ns-3 3.44 these are buffer-full drops, and also SDUs that found the head of the queue
older than the bearer's delay budget, 300 ms, which are queued all the same: a count with
no TCP recovery or timeout is the latter).

The scenario and the trace callbacks are C++ compiled by cppyy at import; Python parses
arguments, loops over runs and writes the CSV. Several runs share one process
(Simulator::Destroy between runs; RngRun = run; random streams fixed by AssignStreams).
The file is one piece on purpose, as ns3_wifi.py: the hash of this file names the script
that made each CSV row.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time

CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/applications-module.h"
#include "ns3/mobility-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/lte-module.h"
#include <cmath>
#include <map>
#include <vector>
#include <string>

namespace esl {
using namespace ns3;

enum Mode { UPLINK = 0, DOWNLINK = 1, ROUND = 2, PROBE = 3, UDP = 4 };

struct Acc
{
    double sum = 0;
    uint64_t n = 0;
    void Add(double x) { sum += x; n++; }
    double Mean() const { return n ? sum / n : -1.0; }
};

static std::vector<Ptr<PacketSink>> g_dlSinks, g_ulSinks;
static std::vector<Ptr<Node>> g_ue;
static std::vector<Address> g_ulDest;
static std::vector<double> g_dl, g_ul, g_rtt0;
static uint64_t g_target = 0;
static int g_mode = 0;
static double g_t0 = 0;
static uint32_t g_left = 0;
static uint32_t g_segSize = 1448;
static uint32_t g_rto = 0, g_recovery = 0, g_rlcDrops = 0;
static std::vector<Acc> g_dlSinr;                  // per UE index, dB
static std::map<uint16_t, Acc> g_ulSinr, g_dlMcs, g_ulMcs, g_dlTbs, g_ulTbs;  // per RNTI

static bool Active() { return Simulator::Now().GetSeconds() >= g_t0; }

static void OnDlSinr(uint32_t i, uint16_t, uint16_t, double, double sinr, uint8_t)
{
    if (Active()) g_dlSinr[i].Add(10 * std::log10(sinr));
}

static void OnUlSinr(uint16_t, uint16_t rnti, double sinr, uint8_t)
{
    if (Active()) g_ulSinr[rnti].Add(10 * std::log10(sinr));
}

static void OnDlSched(DlSchedulingCallbackInfo info)
{
    if (!Active()) return;
    g_dlMcs[info.rnti].Add(info.mcsTb1);
    g_dlTbs[info.rnti].Add(info.sizeTb1);
}

static void OnUlSched(uint32_t, uint32_t, uint16_t rnti, uint8_t mcs, uint16_t tbs, uint8_t)
{
    if (!Active()) return;
    g_ulMcs[rnti].Add(mcs);
    g_ulTbs[rnti].Add(tbs);
}

static void OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS) g_rto++;
    else if (now == TcpSocketState::CA_RECOVERY) g_recovery++;
}

static void OnRtt(uint32_t i, Time, Time now)
{
    if (g_rtt0[i] < 0 && now > Seconds(0)) g_rtt0[i] = now.GetSeconds();
}

static void OnRlcDrop(Ptr<const Packet>) { g_rlcDrops++; }

// BulkSend creates its socket when it starts: hook the sender's traces just after.
static void HookSender(Ptr<BulkSendApplication> app, uint32_t i)
{
    Ptr<Socket> s = app->GetSocket();
    if (!s) return;
    s->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    s->TraceConnectWithoutContext("LastRTT", MakeBoundCallback(&OnRtt, i));
}

static Ptr<BulkSendApplication> Bulk(Ptr<Node> from, Address to, double at)
{
    BulkSendHelper bs("ns3::TcpSocketFactory", to);
    bs.SetAttribute("MaxBytes", UintegerValue(g_target));
    bs.SetAttribute("SendSize", UintegerValue(g_segSize));
    ApplicationContainer c = bs.Install(from);
    c.Start(Seconds(at));
    return DynamicCast<BulkSendApplication>(c.Get(0));
}

static void StartUl(uint32_t i)
{
    // relative start: Node::AddApplication initialises it now
    Ptr<BulkSendApplication> app = Bulk(g_ue[i], g_ulDest[i], 0);
    Simulator::Schedule(NanoSeconds(1), &HookSender, app, i);
}

static void Finish()
{
    if (--g_left == 0) Simulator::Stop();
}

static void OnDlRx(uint32_t i, Ptr<const Packet>, const Address&)
{
    if (g_dl[i] >= 0 || g_dlSinks[i]->GetTotalRx() < g_target) return;
    g_dl[i] = Simulator::Now().GetSeconds() - g_t0;
    if (g_mode == ROUND) StartUl(i);
    else Finish();
}

static void OnUlRx(uint32_t i, Ptr<const Packet>, const Address&)
{
    if (g_ul[i] >= 0 || g_ulSinks[i]->GetTotalRx() < g_target) return;
    g_ul[i] = Simulator::Now().GetSeconds() - g_t0;
    Finish();
}

static void OnProbeDl(uint32_t i, Ptr<const Packet>, const Address&)
{
    if (g_dl[i] < 0) g_dl[i] = Simulator::Now().GetSeconds() - g_t0;
}

static void OnProbeUl(uint32_t i, Ptr<const Packet>, const Address&)
{
    if (g_ul[i] < 0) g_ul[i] = Simulator::Now().GetSeconds() - g_t0 - 0.5;
    Finish();
}

// UDP saturation: goodput (bit/s) over the second half of each 1-s flood.
static std::vector<double> g_snap;
static void Snap(bool ul, bool second)
{
    std::vector<Ptr<PacketSink>>& sinks = ul ? g_ulSinks : g_dlSinks;
    std::vector<double>& out = ul ? g_ul : g_dl;
    for (uint32_t i = 0; i < sinks.size(); i++)
    {
        double b = sinks[i]->GetTotalRx();
        if (second) out[i] = (b - g_snap[i]) * 8 / 0.5;
        else g_snap[i] = b;
    }
    if (ul && second) g_left = 0;
}

static std::vector<Ptr<LteUeNetDevice>> g_ueDev;
static uint32_t g_connectedAtStart = 0;
static void AtStart()
{
    g_connectedAtStart = 0;
    for (auto& d : g_ueDev)
        g_connectedAtStart += d->GetRrc()->GetState() == LteUeRrc::CONNECTED_NORMALLY;
    // The radio bearers exist now: count RLC transmit-buffer drops at both ends.
    Config::ConnectWithoutContextFailSafe(
        "/NodeList/*/DeviceList/*/LteEnbRrc/UeMap/*/DataRadioBearerMap/*/LteRlc/TxDrop",
        MakeCallback(&OnRlcDrop));
    Config::ConnectWithoutContextFailSafe(
        "/NodeList/*/DeviceList/*/LteUeRrc/DataRadioBearerMap/*/LteRlc/TxDrop",
        MakeCallback(&OnRlcDrop));
}

struct Result
{
    std::vector<double> dl, ul;          // per-UE completion (s from start), -1 if none
    std::vector<double> dlSinrDb, ulSinrDb, dlMcs, ulMcs, dlTbsBytes, ulTbsBytes;
    std::vector<double> rtt0;            // first RTT sample of the UE's first TCP sender (s)
    uint32_t connectedAtStart;
    uint32_t rto, recovery, rlcDrops;
    double simEnd;                       // s from start when the run stopped
    uint32_t done;
};

Result RunCell(uint32_t rbs, double distance, std::string scheduler, uint32_t n,
               uint64_t bytes, int mode, uint32_t run, double start, double maxTime,
               uint32_t segSize, uint32_t rlcBuffer)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segSize));
    // ns-3's default RLC UM buffer (10 240 B) drops TCP's initial window (README).
    Config::SetDefault("ns3::LteRlcUm::MaxTxBufferSize", UintegerValue(rlcBuffer));
    g_segSize = segSize;

    Ptr<LteHelper> lte = CreateObject<LteHelper>();
    Ptr<PointToPointEpcHelper> epc = CreateObject<PointToPointEpcHelper>();
    lte->SetEpcHelper(epc);
    lte->SetSchedulerType("ns3::" + scheduler);
    lte->SetEnbDeviceAttribute("DlBandwidth", UintegerValue(rbs));
    lte->SetEnbDeviceAttribute("UlBandwidth", UintegerValue(rbs));

    Ptr<Node> pgw = epc->GetPgwNode();
    NodeContainer remote;
    remote.Create(1);
    InternetStackHelper stack;
    stack.Install(remote);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate("1Gb/s")));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(1500));
    p2p.SetChannelAttribute("Delay", TimeValue(MilliSeconds(1)));
    NetDeviceContainer inet = p2p.Install(pgw, remote.Get(0));
    Ipv4AddressHelper ah;
    ah.SetBase("1.0.0.0", "255.0.0.0");
    Ipv4InterfaceContainer inetIf = ah.Assign(inet);
    Ipv4Address remoteAddr = inetIf.GetAddress(1);
    Ipv4StaticRoutingHelper srh;
    srh.GetStaticRouting(remote.Get(0)->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("7.0.0.0"), Ipv4Mask("255.0.0.0"), 1);

    NodeContainer enb, ues;
    enb.Create(1);
    ues.Create(n);
    MobilityHelper mob;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    for (uint32_t i = 0; i < n; i++)
    {
        double a = 2 * M_PI * i / n;
        pos->Add(Vector(distance * std::cos(a), distance * std::sin(a), 0));
    }
    mob.SetPositionAllocator(pos);
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.Install(enb);
    mob.Install(ues);

    NetDeviceContainer enbDev = lte->InstallEnbDevice(enb);
    NetDeviceContainer ueDev = lte->InstallUeDevice(ues);
    stack.Install(ues);
    Ipv4InterfaceContainer ueIf = epc->AssignUeIpv4Address(ueDev);
    for (uint32_t i = 0; i < n; i++)
        srh.GetStaticRouting(ues.Get(i)->GetObject<Ipv4>())
            ->SetDefaultRoute(epc->GetUeDefaultGatewayAddress(), 1);
    lte->Attach(ueDev, enbDev.Get(0));

    int64_t s = 100;
    s += lte->AssignStreams(enbDev, s);
    s += lte->AssignStreams(ueDev, s);
    s += stack.AssignStreams(remote, s);
    s += stack.AssignStreams(ues, s);

    g_dlSinks.clear(); g_ulSinks.clear(); g_ue.clear(); g_ulDest.clear(); g_ueDev.clear();
    g_dl.assign(n, -1.0); g_ul.assign(n, -1.0); g_rtt0.assign(n, -1.0);
    g_dlSinr.assign(n, Acc());
    g_ulSinr.clear(); g_dlMcs.clear(); g_ulMcs.clear(); g_dlTbs.clear(); g_ulTbs.clear();
    g_target = bytes; g_mode = mode; g_t0 = start; g_left = n;
    g_rto = 0; g_recovery = 0; g_rlcDrops = 0; g_connectedAtStart = 0;

    Ptr<LteEnbNetDevice> ed = DynamicCast<LteEnbNetDevice>(enbDev.Get(0));
    ed->GetMac()->TraceConnectWithoutContext("DlScheduling", MakeCallback(&OnDlSched));
    ed->GetMac()->TraceConnectWithoutContext("UlScheduling", MakeCallback(&OnUlSched));
    ed->GetPhy()->TraceConnectWithoutContext("ReportUeSinr", MakeCallback(&OnUlSinr));

    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<LteUeNetDevice> ud = DynamicCast<LteUeNetDevice>(ueDev.Get(i));
        g_ueDev.push_back(ud);
        ud->GetPhy()->TraceConnectWithoutContext("ReportCurrentCellRsrpSinr",
                                                 MakeBoundCallback(&OnDlSinr, i));
        g_ue.push_back(ues.Get(i));
        uint16_t ulPort = 10000 + i, dlPort = 9;
        g_ulDest.push_back(InetSocketAddress(remoteAddr, ulPort));
        bool udp = mode == PROBE || mode == UDP;
        std::string factory = udp ? "ns3::UdpSocketFactory" : "ns3::TcpSocketFactory";
        if (mode != DOWNLINK)
        {
            PacketSinkHelper sh(factory, InetSocketAddress(Ipv4Address::GetAny(), ulPort));
            ApplicationContainer c = sh.Install(remote.Get(0));
            c.Start(Seconds(0.1));
            Ptr<PacketSink> sink = DynamicCast<PacketSink>(c.Get(0));
            if (mode != UDP)
                sink->TraceConnectWithoutContext(
                    "Rx", MakeBoundCallback(mode == PROBE ? &OnProbeUl : &OnUlRx, i));
            g_ulSinks.push_back(sink);
        }
        if (mode != UPLINK)
        {
            PacketSinkHelper sh(factory, InetSocketAddress(Ipv4Address::GetAny(), dlPort));
            ApplicationContainer c = sh.Install(ues.Get(i));
            c.Start(Seconds(0.1));
            Ptr<PacketSink> sink = DynamicCast<PacketSink>(c.Get(0));
            if (mode != UDP)
                sink->TraceConnectWithoutContext(
                    "Rx", MakeBoundCallback(mode == PROBE ? &OnProbeDl : &OnDlRx, i));
            g_dlSinks.push_back(sink);
        }
        if (mode == DOWNLINK || mode == ROUND)
        {
            Ptr<BulkSendApplication> app =
                Bulk(remote.Get(0), InetSocketAddress(ueIf.GetAddress(i), dlPort), start);
            Simulator::Schedule(Seconds(start) + NanoSeconds(1), &HookSender, app, i);
        }
        if (mode == UPLINK)
        {
            Ptr<BulkSendApplication> app = Bulk(ues.Get(i), g_ulDest[i], start);
            Simulator::Schedule(Seconds(start) + NanoSeconds(1), &HookSender, app, i);
        }
        if (mode == PROBE)
        {
            for (int dir = 0; dir < 2; dir++)
            {
                Address to = dir == 0 ? Address(InetSocketAddress(ueIf.GetAddress(i), dlPort))
                                      : g_ulDest[i];
                OnOffHelper oo("ns3::UdpSocketFactory", to);
                oo.SetConstantRate(DataRate("1Mb/s"), 100);
                oo.SetAttribute("MaxBytes", UintegerValue(100));
                ApplicationContainer c = oo.Install(dir == 0 ? remote.Get(0) : ues.Get(i));
                c.Start(Seconds(start + 0.5 * dir));
            }
        }
        if (mode == UDP)
        {
            // 1472-byte datagrams (1500-byte IP packets) at 1.5x the cell's peak, for
            // 1 s down (from the start), then 1 s up (from start + 1.5 s).
            double rate = 1.5 * 75.4e6 * rbs / 100.0 / n;
            for (int dir = 0; dir < 2; dir++)
            {
                Address to = dir == 0 ? Address(InetSocketAddress(ueIf.GetAddress(i), dlPort))
                                      : g_ulDest[i];
                OnOffHelper oo("ns3::UdpSocketFactory", to);
                oo.SetConstantRate(DataRate(uint64_t(rate)), 1472);
                ApplicationContainer c = oo.Install(dir == 0 ? remote.Get(0) : ues.Get(i));
                c.Start(Seconds(start + 1.5 * dir));
                c.Stop(Seconds(start + 1.5 * dir + 1.0));
            }
        }
    }
    Simulator::Schedule(Seconds(start) - NanoSeconds(1), &AtStart);
    if (mode == UDP)
    {
        g_snap.assign(n, 0.0);
        Simulator::Schedule(Seconds(start + 0.5), &Snap, false, false);
        Simulator::Schedule(Seconds(start + 1.0), &Snap, false, true);
        Simulator::Schedule(Seconds(start + 2.0), &Snap, true, false);
        Simulator::Schedule(Seconds(start + 2.5), &Snap, true, true);
        maxTime = 2.5 + 1e-9;
    }

    Simulator::Stop(Seconds(start + maxTime));
    Simulator::Run();

    Result r;
    r.simEnd = Simulator::Now().GetSeconds() - start;
    r.dl = g_dl; r.ul = g_ul; r.rtt0 = g_rtt0;
    r.connectedAtStart = g_connectedAtStart;
    r.rto = g_rto; r.recovery = g_recovery; r.rlcDrops = g_rlcDrops;
    r.done = n - g_left;
    for (uint32_t i = 0; i < n; i++)
    {
        uint16_t rnti = g_ueDev[i]->GetRrc()->GetRnti();
        r.dlSinrDb.push_back(g_dlSinr[i].Mean());
        r.ulSinrDb.push_back(g_ulSinr[rnti].Mean());
        r.dlMcs.push_back(g_dlMcs[rnti].Mean());
        r.ulMcs.push_back(g_ulMcs[rnti].Mean());
        r.dlTbsBytes.push_back(g_dlTbs[rnti].Mean());
        r.ulTbsBytes.push_back(g_ulTbs[rnti].Mean());
    }
    g_dlSinks.clear(); g_ulSinks.clear(); g_ue.clear(); g_ulDest.clear(); g_ueDev.clear();
    Simulator::Destroy();
    return r;
}
}  // namespace esl
"""

MODES = {"uplink": 0, "downlink": 1, "round": 2, "probe": 3, "udp": 4}
SCHEDULERS = {"rr": "RrFfMacScheduler", "pf": "PfFfMacScheduler"}
FIELDS = (
    "rbs distance_m scheduler n bytes mode run rlc_buffer last_s ns3_version mean_s "
    "dl_last_s connected_at_start completed tcp_rto tcp_recovery rlc_txdrop_trace "
    "dl_sinr_db ul_sinr_db dl_mcs ul_mcs dl_tbs_bytes ul_tbs_bytes rtt_first_ms "
    "udp_dl_mbps udp_ul_mbps wall_s script per_device_s dl_per_device_s"
).split()

_NS = None


def _script_id() -> str:
    import hashlib

    with open(os.path.abspath(__file__), "rb") as f:
        return "ns3_lte.py@" + hashlib.sha256(f.read()).hexdigest()[:12]


_SCRIPT_ID = _script_id()


def script_id() -> str:
    """This script's name and the first 12 hex digits of its SHA-256 (as imported)."""
    return _SCRIPT_ID


def ns3_version() -> str:
    """The version string of the installed ``ns3`` PyPI package."""
    from importlib.metadata import version

    return version("ns3")


def load():
    """Import ns-3 (10-25 s) and compile the scenario once per process; returns its namespace."""
    global _NS
    if _NS is None:
        import cppyy
        from ns import ns  # noqa: F401  (loads the libraries and headers)

        cppyy.cppdef(CPP)
        _NS = cppyy.gbl.esl
    return _NS


def _mean(xs):
    ok = [x for x in xs if x >= 0]
    return sum(ok) / len(ok) if ok else None


def _fmt(x, digits):
    return "" if x is None else round(x, digits)


DEFAULTS = dict(start=1.0, max_time=120.0, seg_size=1448, rlc_buffer=1 << 20)


def run_one(rbs, distance, scheduler, n, nbytes, mode, run, **opts):
    """One ns-3 run; returns its CSV row (times in s from the traffic start).

    ``scheduler`` is ``rr`` or ``pf``; SINRs in dB, MCS as mean scheduled index, TBS as the
    mean transport block per scheduled TTI in bytes, all averaged over the UEs. ``opts``
    override DEFAULTS (start and max_time in s, seg_size and rlc_buffer in bytes).
    """
    o = {**DEFAULTS, **opts}
    esl = load()
    t = time.time()
    args = (rbs, distance, SCHEDULERS[scheduler], n, nbytes, MODES[mode], run, o["start"])
    r = esl.RunCell(*args, o["max_time"], o["seg_size"], o["rlc_buffer"])
    wall = time.time() - t
    dl = [float(x) for x in r.dl]
    ul = [float(x) for x in r.ul]
    per = dl if mode == "downlink" else ul
    ok = [x for x in per if x >= 0]
    complete = int(r.done) == n and len(ok) == n
    if mode in ("probe", "udp"):
        complete = min(dl) >= 0 and min(ul) >= 0
    udp = mode == "udp"
    return {
        "rbs": rbs,
        "distance_m": distance,
        "scheduler": scheduler,
        "n": n,
        "bytes": nbytes,
        "mode": mode,
        "run": run,
        "rlc_buffer": o["rlc_buffer"],
        "last_s": round(max(per), 6) if complete and not udp else "",
        "ns3_version": ns3_version(),
        "mean_s": round(sum(ok) / len(ok), 6) if ok and not udp else "",
        "dl_last_s": round(max(dl), 6) if mode in ("round", "probe") and min(dl) >= 0 else "",
        "connected_at_start": int(r.connectedAtStart),
        "completed": int(r.done),
        "tcp_rto": int(r.rto),
        "tcp_recovery": int(r.recovery),
        "rlc_txdrop_trace": int(r.rlcDrops),
        "dl_sinr_db": _fmt(_mean([float(x) for x in r.dlSinrDb]), 2),
        "ul_sinr_db": _fmt(_mean([float(x) for x in r.ulSinrDb]), 2),
        "dl_mcs": _fmt(_mean([float(x) for x in r.dlMcs]), 2),
        "ul_mcs": _fmt(_mean([float(x) for x in r.ulMcs]), 2),
        "dl_tbs_bytes": _fmt(_mean([float(x) for x in r.dlTbsBytes]), 1),
        "ul_tbs_bytes": _fmt(_mean([float(x) for x in r.ulTbsBytes]), 1),
        "rtt_first_ms": _fmt(_mean([1e3 * float(x) for x in r.rtt0]), 3),
        "udp_dl_mbps": round(sum(dl) / 1e6, 3) if udp else "",
        "udp_ul_mbps": round(sum(ul) / 1e6, 3) if udp else "",
        "wall_s": round(wall, 2),
        "script": script_id(),
        "per_device_s": "" if udp else ";".join(f"{x:.6f}" for x in per),
        "dl_per_device_s": ";".join(f"{x:.6f}" for x in dl) if mode == "round" else "",
    }


def append_rows(path, rows):
    """Append CSV rows to ``path`` (header first if the file is new or empty)."""
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for row in rows:
            w.writerow(row)


def main(argv=None):
    """Command line: run one configuration several times; returns the rows."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rbs", type=int, choices=[6, 15, 25, 50, 75, 100], default=100)
    p.add_argument("--distance", type=float, default=50.0, help="UE circle radius (m)")
    p.add_argument("--scheduler", choices=list(SCHEDULERS), default="rr")
    p.add_argument("--n", type=int, default=1)
    p.add_argument("--bytes", type=int, default=1_000_000)
    p.add_argument("--mode", choices=list(MODES), default="round")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--first-run", type=int, default=1)
    p.add_argument("--start", type=float, default=1.0, help="traffic start (s)")
    p.add_argument("--max-time", type=float, default=120.0, help="simulated s after start")
    p.add_argument(
        "--rlc-buffer",
        type=int,
        default=1 << 20,
        help="LteRlcUm MaxTxBufferSize in bytes (ns-3's default 10240 drops TCP's window)",
    )
    p.add_argument("--out", default=None, help="CSV to append rows to")
    a = p.parse_args(argv)
    rows = []
    for run in range(a.first_run, a.first_run + a.runs):
        cfg = (a.rbs, a.distance, a.scheduler, a.n, a.bytes, a.mode, run)
        row = run_one(*cfg, start=a.start, max_time=a.max_time, rlc_buffer=a.rlc_buffer)
        rows.append(row)
        print(
            f"{a.rbs}RB d={a.distance:g} {a.scheduler} n={a.n} bytes={a.bytes} {a.mode}"
            f" run={run} last={row['last_s']} s (mean {row['mean_s']}, dl_last"
            f" {row['dl_last_s']}, conn {row['connected_at_start']}/{a.n}, rto"
            f" {row['tcp_rto']}, rlc TxDrop {row['rlc_txdrop_trace']}, SINR dl/ul"
            f" {row['dl_sinr_db']}/{row['ul_sinr_db']} dB, MCS dl/ul {row['dl_mcs']}/"
            f"{row['ul_mcs']}, rtt0 {row['rtt_first_ms']} ms, udp dl/ul {row['udp_dl_mbps']}/"
            f"{row['udp_ul_mbps']} Mbit/s, wall {row['wall_s']:.1f} s)",
            flush=True,
        )
        if a.out:
            append_rows(a.out, [row])
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
