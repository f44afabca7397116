"""One 802.11 cell in ns-3: reference completion times for edgesim's Wi-Fi model.

Run with the ns-3 virtual environment (see README.md), not edgesim's:

    ~/.venvs/ns3/bin/python analysis/validation/ns3_wifi.py \
        --standard ac --mcs 7 --n 10 --bytes 800000 --mode round --runs 5 --out x.csv

Scenario: one access point (which is also the FL server, co-located) and N stations on a
circle of radius 5 m (constant positions); 5 GHz, 20 MHz channel, one spatial stream,
default guard interval, YansWifiChannel defaults (log-distance loss, no fading), the
ConstantRateWifiManager at the given MCS (data and control mode alike, as in ns-3's
vht-wifi-network example), default EDCA and A-MPDU settings; TCP (ns-3 defaults, segment
size 1448 B) carried by BulkSend / PacketSink applications. ARP caches are pre-filled
(``--arp warm``) and filled again after each association, since ARP flushes a cache when
its link comes up; without that, every station's first packet waited for an ARP exchange
(ArpL3Protocol's RequestJitter, uniform 0-10 ms). The MAC queues have no packet cap
(100 000) and keep ns-3's 500 ms sojourn limit (``--mac-queue``): the default cap of 500
packets, shared by every receiver, tail-drops at the AP. ``--ascii-trace FILE`` writes
every frame on the air, for diagnosis.

Modes, all times measured from the traffic start (``--start``, default 2 s, after the
stations have associated):
  uplink    every station sends S bytes to the AP at once; a station is done when the
            AP's sink for it has received S bytes;
  downlink  the AP sends S bytes to every station at once; done when the station's sink
            has received S bytes;
  round     downlink as above, and each station starts its uplink of S bytes the moment
            its downlink sink has received all S bytes (a new TCP connection); a station is
            done when the AP has received its S bytes.

The scenario and the trace callbacks are C++ compiled by cppyy at import; Python only
parses arguments, loops over runs and writes the CSV. Several runs share one process
(Simulator::Destroy between runs; RngRun = run; random streams fixed by AssignStreams).

The file is one piece on purpose: the C++ scenario and its Python driver travel together,
and the hash of this one file names the script that made each CSV row.
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
#include "ns3/wifi-module.h"
#include <cmath>
#include <vector>
#include <string>

namespace esv {
using namespace ns3;

enum Mode { UPLINK = 0, DOWNLINK = 1, ROUND = 2 };

static std::vector<Ptr<PacketSink>> g_dlSinks, g_ulSinks;
static std::vector<Ptr<Node>> g_sta;
static std::vector<Address> g_ulDest;
static std::vector<double> g_dl, g_ul;
static uint64_t g_target = 0;
static int g_mode = 0;
static double g_t0 = 0;
static uint32_t g_left = 0;
static uint32_t g_deassoc = 0;
static double g_lastAssoc = 0;
static uint32_t g_segSize = 1448;

static void StartUl(uint32_t i)
{
    BulkSendHelper bs("ns3::TcpSocketFactory", g_ulDest[i]);
    bs.SetAttribute("MaxBytes", UintegerValue(g_target));
    bs.SetAttribute("SendSize", UintegerValue(g_segSize));
    ApplicationContainer c = bs.Install(g_sta[i]);
    c.Start(Seconds(0));  // relative: Node::AddApplication initialises it now
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

static bool g_warmArp = true;
static void WarmArp()
{
    NeighborCacheHelper nch;
    nch.PopulateNeighborCache();
}

static std::vector<bool> g_isAssoc;
static void OnAssoc(uint32_t i, Mac48Address)
{
    g_isAssoc[i] = true;
    g_lastAssoc = Simulator::Now().GetSeconds();
    // An association brings the station's link up, and ARP flushes its cache on every
    // link change: fill it again once this event is done (see README, "warm ARP").
    if (g_warmArp) Simulator::ScheduleNow(&WarmArp);
}

static void OnDeAssoc(uint32_t i, Mac48Address)
{
    g_isAssoc[i] = false;
    g_deassoc++;
}

struct Result
{
    std::vector<double> dl;    // per-station downlink completion (s from start), -1 if none
    std::vector<double> ul;    // per-station uplink completion
    uint32_t assocAtStart;     // stations associated when traffic started
    uint32_t deassoc;          // de-association events (should be 0)
    double lastAssoc;          // time of the last association (s, absolute)
    double phyRateBps;         // data rate of the configured mode
    double simEnd;             // simulated time when the run stopped (s from start)
    uint32_t done;             // stations that completed
};

static uint32_t g_assocAtStart = 0;
static void SnapAssoc()
{
    g_assocAtStart = 0;
    for (bool b : g_isAssoc) g_assocAtStart += b;
}

Result RunCell(std::string standard, std::string dataMode, std::string controlMode,
               uint32_t n, uint64_t bytes, int mode, uint32_t run, double start,
               double maxTime, uint32_t segSize, bool warmArp, std::string asciiTrace,
               uint32_t queuePackets, double queueDelay)
{
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segSize));
    // No cap on the MAC queue's packets, ns-3's 500 ms sojourn limit kept (see README):
    // the default cap of 500 packets, shared by all receivers, tail-drops at the AP once N
    // flows' windows queue there, and TCP then waits out 1-s retransmission timeouts.
    Config::SetDefault("ns3::WifiMacQueue::MaxSize",
                       QueueSizeValue(QueueSize(std::to_string(queuePackets) + "p")));
    Config::SetDefault("ns3::WifiMacQueue::MaxDelay", TimeValue(Seconds(queueDelay)));
    g_segSize = segSize;

    NodeContainer apNode;
    apNode.Create(1);
    NodeContainer sta;
    sta.Create(n);

    YansWifiChannelHelper chHelper = YansWifiChannelHelper::Default();
    Ptr<YansWifiChannel> channel = chHelper.Create();
    YansWifiPhyHelper phy;
    phy.SetChannel(channel);
    phy.Set("ChannelSettings", StringValue("{0, 20, BAND_5GHZ, 0}"));

    WifiHelper wifi;
    wifi.SetStandard(standard == "ax" ? WIFI_STANDARD_80211ax : WIFI_STANDARD_80211ac);
    wifi.SetRemoteStationManager("ns3::ConstantRateWifiManager",
                                 "DataMode", StringValue(dataMode),
                                 "ControlMode", StringValue(controlMode));
    WifiMacHelper mac;
    Ssid ssid("edgesim-val");
    mac.SetType("ns3::StaWifiMac", "Ssid", SsidValue(ssid));
    NetDeviceContainer staDev = wifi.Install(phy, mac, sta);
    mac.SetType("ns3::ApWifiMac", "Ssid", SsidValue(ssid));
    NetDeviceContainer apDev = wifi.Install(phy, mac, apNode);
    Ptr<OutputStreamWrapper> trace;
    if (!asciiTrace.empty())
    {
        // Every frame on the air, headers printed (diagnosis only: slow, large files).
        Packet::EnablePrinting();
        AsciiTraceHelper ascii;
        trace = ascii.CreateFileStream(asciiTrace);
        phy.EnableAsciiAll(trace);
    }

    MobilityHelper mob;
    Ptr<ListPositionAllocator> pos = CreateObject<ListPositionAllocator>();
    pos->Add(Vector(0, 0, 0));
    for (uint32_t i = 0; i < n; i++)
    {
        double a = 2 * M_PI * i / n;
        pos->Add(Vector(5 * std::cos(a), 5 * std::sin(a), 0));
    }
    mob.SetPositionAllocator(pos);
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.Install(apNode);
    mob.Install(sta);

    InternetStackHelper stack;
    stack.Install(apNode);
    stack.Install(sta);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.0.0", "255.255.0.0");
    Ipv4InterfaceContainer apIf = addr.Assign(apDev);
    Ipv4InterfaceContainer staIf = addr.Assign(staDev);
    g_warmArp = warmArp;  // pre-filled ARP caches, refilled at each association
    if (warmArp) WarmArp();

    int64_t s = 100;
    s += WifiHelper::AssignStreams(apDev, s);
    s += WifiHelper::AssignStreams(staDev, s);
    s += chHelper.AssignStreams(channel, s);
    s += stack.AssignStreams(apNode, s);
    s += stack.AssignStreams(sta, s);

    g_dlSinks.clear(); g_ulSinks.clear(); g_sta.clear(); g_ulDest.clear();
    g_dl.assign(n, -1.0); g_ul.assign(n, -1.0);
    g_target = bytes; g_mode = mode; g_t0 = start;
    g_left = n; g_deassoc = 0; g_lastAssoc = 0; g_assocAtStart = 0;

    Ipv4Address apAddr = apIf.GetAddress(0);
    for (uint32_t i = 0; i < n; i++)
    {
        g_sta.push_back(sta.Get(i));
        uint16_t ulPort = 10000 + i, dlPort = 9;
        g_ulDest.push_back(InetSocketAddress(apAddr, ulPort));
        if (mode == UPLINK || mode == ROUND)
        {
            PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), ulPort));
            ApplicationContainer c = sh.Install(apNode.Get(0));
            c.Start(Seconds(0.5));
            Ptr<PacketSink> sink = DynamicCast<PacketSink>(c.Get(0));
            sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnUlRx, i));
            g_ulSinks.push_back(sink);
        }
        if (mode == DOWNLINK || mode == ROUND)
        {
            PacketSinkHelper sh("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), dlPort));
            ApplicationContainer c = sh.Install(sta.Get(i));
            c.Start(Seconds(0.5));
            Ptr<PacketSink> sink = DynamicCast<PacketSink>(c.Get(0));
            sink->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnDlRx, i));
            g_dlSinks.push_back(sink);

            BulkSendHelper bs("ns3::TcpSocketFactory", InetSocketAddress(staIf.GetAddress(i), dlPort));
            bs.SetAttribute("MaxBytes", UintegerValue(bytes));
            bs.SetAttribute("SendSize", UintegerValue(segSize));
            ApplicationContainer b = bs.Install(apNode.Get(0));
            b.Start(Seconds(start));
        }
        if (mode == UPLINK)
        {
            BulkSendHelper bs("ns3::TcpSocketFactory", g_ulDest[i]);
            bs.SetAttribute("MaxBytes", UintegerValue(bytes));
            bs.SetAttribute("SendSize", UintegerValue(segSize));
            ApplicationContainer b = bs.Install(sta.Get(i));
            b.Start(Seconds(start));
        }
    }

    g_isAssoc.assign(n, false);
    for (uint32_t i = 0; i < n; i++)
    {
        Ptr<WifiMac> m = DynamicCast<WifiNetDevice>(staDev.Get(i))->GetMac();
        m->TraceConnectWithoutContext("Assoc", MakeBoundCallback(&OnAssoc, i));
        m->TraceConnectWithoutContext("DeAssoc", MakeBoundCallback(&OnDeAssoc, i));
    }
    Simulator::Schedule(Seconds(start) - NanoSeconds(1), &SnapAssoc);

    // PHY rate of the configured data mode with this device's guard interval.
    Ptr<WifiNetDevice> wd = DynamicCast<WifiNetDevice>(apDev.Get(0));
    Time gi = NanoSeconds(800);
    if (standard == "ax") gi = wd->GetHeConfiguration()->GetGuardInterval();
    else if (wd->GetHtConfiguration()->GetShortGuardIntervalSupported()) gi = NanoSeconds(400);
    double rate = WifiMode(dataMode).GetDataRate(MHz_u{20}, gi, 1);

    Simulator::Stop(Seconds(start + maxTime));
    Simulator::Run();
    double end = Simulator::Now().GetSeconds() - start;
    if (trace) trace->GetStream()->flush();

    Result r;
    r.dl = g_dl; r.ul = g_ul;
    r.assocAtStart = g_assocAtStart; r.deassoc = g_deassoc; r.lastAssoc = g_lastAssoc;
    r.phyRateBps = rate; r.simEnd = end; r.done = n - g_left;
    g_dlSinks.clear(); g_ulSinks.clear(); g_sta.clear(); g_ulDest.clear();
    Simulator::Destroy();
    return r;
}
}  // namespace esv
"""

MODES = {"uplink": 0, "downlink": 1, "round": 2}
FIELDS = [
    "standard",
    "mcs",
    "n",
    "bytes",
    "mode",
    "run",
    "arp",
    "mac_queue",
    "last_s",
    "ns3_version",
    "mean_s",
    "dl_last_s",
    "phy_rate_mbps",
    "assoc_at_start",
    "deassoc",
    "completed",
    "wall_s",
    "script",
    "per_device_s",
]

_NS = None


def script_id() -> str:
    """This script's name and the first 12 hex digits of its SHA-256 (as imported)."""
    return _SCRIPT_ID


def _script_id() -> str:
    import hashlib

    with open(os.path.abspath(__file__), "rb") as f:
        return "ns3_wifi.py@" + hashlib.sha256(f.read()).hexdigest()[:12]


_SCRIPT_ID = _script_id()


def ns3_version() -> str:
    from importlib.metadata import version

    return version("ns3")


def load():
    """Import ns-3 (about 10-25 s) and compile the scenario once per process."""
    global _NS
    if _NS is None:
        import cppyy
        from ns import ns  # noqa: F401  (loads the libraries and headers)

        cppyy.cppdef(CPP)
        _NS = cppyy.gbl.esv
    return _NS


def mode_name(standard: str, mcs: int) -> str:
    return f"HeMcs{mcs}" if standard == "ax" else f"VhtMcs{mcs}"


def run_one(
    standard,
    mcs,
    n,
    nbytes,
    mode,
    run,
    start=2.0,
    max_time=600.0,
    seg_size=1448,
    control=None,
    arp="warm",
    ascii_trace="",
    queue=(100_000, 0.5),
):
    """One ns-3 run; returns its CSV row (times in s from the traffic start)."""
    esv = load()
    dm = mode_name(standard, mcs)
    t = time.time()
    r = esv.RunCell(
        standard,
        dm,
        control or dm,
        n,
        nbytes,
        MODES[mode],
        run,
        start,
        max_time,
        seg_size,
        arp == "warm",
        ascii_trace,
        queue[0],
        queue[1],
    )
    wall = time.time() - t
    dl = [float(x) for x in r.dl]
    ul = [float(x) for x in r.ul]
    per = dl if mode == "downlink" else ul
    ok = [x for x in per if x >= 0]
    complete = int(r.done) == n
    return {
        "standard": standard,
        "mcs": mcs,
        "n": n,
        "bytes": nbytes,
        "mode": mode,
        "run": run,
        "arp": arp,
        "mac_queue": f"{queue[0]}p/{queue[1]:g}s",
        "last_s": round(max(per), 6) if complete else "",
        "ns3_version": ns3_version(),
        "mean_s": round(sum(ok) / len(ok), 6) if ok else "",
        "dl_last_s": round(max(dl), 6) if mode == "round" and min(dl) >= 0 else "",
        "phy_rate_mbps": round(float(r.phyRateBps) / 1e6, 3),
        "assoc_at_start": int(r.assocAtStart),
        "deassoc": int(r.deassoc),
        "completed": int(r.done),
        "wall_s": round(wall, 2),
        "script": script_id(),
        "per_device_s": ";".join(f"{x:.6f}" for x in per),
    }


def append_rows(path, rows):
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        for row in rows:
            w.writerow(row)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--standard", choices=["ac", "ax"], default="ac")
    p.add_argument("--mcs", type=int, default=7)
    p.add_argument("--n", type=int, default=10)
    p.add_argument("--bytes", type=int, default=800_000)
    p.add_argument("--mode", choices=list(MODES), default="round")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--first-run", type=int, default=1)
    p.add_argument("--start", type=float, default=2.0, help="traffic start (s)")
    p.add_argument(
        "--max-time",
        type=float,
        default=600.0,
        help="simulated seconds after the start before giving up",
    )
    p.add_argument(
        "--control-mode",
        default=None,
        help="ConstantRateWifiManager ControlMode (default: the data mode)",
    )
    p.add_argument(
        "--arp",
        choices=["warm", "cold"],
        default="warm",
        help="warm: ARP caches pre-filled (NeighborCacheHelper); cold: ARP at the start",
    )
    p.add_argument(
        "--ascii-trace",
        default="",
        help="write every frame on the air, headers printed, to this file (diagnosis)",
    )
    p.add_argument(
        "--mac-queue",
        nargs=2,
        type=float,
        default=(100_000, 0.5),
        metavar=("PACKETS", "SECONDS"),
        help="WifiMacQueue MaxSize (packets) and MaxDelay (s); ns-3's defaults are 500 and"
        " 0.5: its packet cap drops at the AP (see README)",
    )
    p.add_argument("--out", default=None, help="CSV to append rows to")
    a = p.parse_args(argv)
    rows = []
    for run in range(a.first_run, a.first_run + a.runs):
        row = run_one(
            a.standard,
            a.mcs,
            a.n,
            a.bytes,
            a.mode,
            run,
            a.start,
            a.max_time,
            control=a.control_mode,
            arp=a.arp,
            ascii_trace=a.ascii_trace,
            queue=(int(a.mac_queue[0]), a.mac_queue[1]),
        )
        rows.append(row)
        print(
            f"{a.standard} mcs{a.mcs} n={a.n} bytes={a.bytes} {a.mode} run={run}"
            f" last={row['last_s']} s (mean {row['mean_s']},"
            f" assoc {row['assoc_at_start']}/{a.n}, wall {row['wall_s']:.1f} s)",
            flush=True,
        )
        if a.out:
            append_rows(a.out, [row])
    return rows


if __name__ == "__main__":
    sys.exit(0 if main() is not None else 1)
