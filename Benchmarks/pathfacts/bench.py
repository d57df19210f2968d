"""The measurements Benchmarks/pathfacts/run.sh prints (see there)."""
import os
import queue
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..', 'Tests', 'Support'))
import nm_mock  # noqa: E402  pylint: disable=wrong-import-position

COURIER, CHANGES, STARTS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def environment(bus, **extra):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus)
    env.pop('COURIER_PATH_FACTS', None)
    env.update(extra)
    return env


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def latency(mock, label, command, env, ready, seen):
    """Times CHANGES Metered changes from the call to the line `seen(name)` of `command`."""
    watch = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True, bufsize=1)
    lines = queue.Queue()

    def read():
        for line in watch.stdout:
            lines.put((time.monotonic(), line))
    threading.Thread(target=read, daemon=True).start()

    def wait_for(text, timeout=30):
        deadline = time.monotonic() + timeout
        while True:
            at, line = lines.get(timeout=max(0.001, deadline - time.monotonic()))
            if text in line:
                return at
    if ready:
        wait_for(ready)
    else:
        # The monitor is subscribed once it shows a change: one every half second until then.
        for _ in range(60):
            mock.metered(0)
            try:
                wait_for(seen('unknown'), timeout=0.5)
                break
            except queue.Empty:
                continue
    samples = []
    for index in range(CHANGES):
        value, name = (1, 'yes') if index % 2 == 0 else (2, 'no')
        start = time.monotonic()
        mock.metered(value)  # returns once the mock has emitted PropertiesChanged
        samples.append((wait_for(seen(name)) - start) * 1000)
    watch.terminate()
    watch.wait(30)
    print(f'{label}, {CHANGES} Metered changes, change → line (ms): '
          f'p50 {percentile(samples, 0.5):.2f}, p90 {percentile(samples, 0.9):.2f}, '
          f'p99 {percentile(samples, 0.99):.2f}, max {max(samples):.2f}, '
          f'mean {statistics.mean(samples):.2f}')
    return samples


def starts(label, arguments, env):
    walls, peaks = [], []
    for _ in range(STARTS):
        result = subprocess.run(['/usr/bin/time', '-f', '%e %M'] + arguments, env=env,
                                capture_output=True, text=True, check=False)
        wall, peak = result.stderr.strip().splitlines()[-1].split()
        walls.append(float(wall) * 1000)
        peaks.append(int(peak) / 1024)
    print(f'{label}: wall median {statistics.median(walls):.0f} ms '
          f'(min {min(walls):.0f}), peak RSS median {statistics.median(peaks):.1f} MiB')


def main():
    mock = nm_mock.PrivateNetworkManager()
    # A primary connection with a DHCPv4 lease naming a captive-portal API: each re-read then
    # follows it to its device and its lease's options, as on a real machine (decision 2606).
    mock.primary('Hotel', '802-11-wireless', 'wlan0')
    mock.dhcp4('default_url', 'https://portal.example/api')
    try:
        courier = latency(
            mock, 'courier watch --json', [COURIER, 'watch', '--json'],
            environment(mock.address), '"service":"NetworkManager"',
            lambda name: f'"metered":"{name}"')
        # The peer: dbus-monitor printing the same signal (the bus's own client, no reads after
        # it). Its value line is `uint32 N` after `string "Metered"`.
        values = {'unknown': 'uint32 0', 'yes': 'uint32 1', 'no': 'uint32 2'}
        peer = latency(
            mock, 'dbus-monitor (peer)',
            ['dbus-monitor', '--address', mock.address,
             "type='signal',interface='org.freedesktop.DBus.Properties',"
             "member='PropertiesChanged',arg0='org.freedesktop.NetworkManager'"],
            os.environ, None, lambda name: values[name])
        print(f'ratio courier/dbus-monitor: p50 '
              f'{percentile(courier, 0.5) / percentile(peer, 0.5):.2f}x, p99 '
              f'{percentile(courier, 0.99) / percentile(peer, 0.99):.2f}x')
        with_bus = environment(mock.address)
        no_bus = environment('unix:path=/nonexistent/courier-bench-bus')
        off = environment(mock.address, COURIER_PATH_FACTS='none')
        print(f'start-up, {STARTS} runs each (/usr/bin/time; wall at 10 ms resolution):')
        starts('  courier --version, bus with NetworkManager', [COURIER, '--version'], with_bus)
        starts('  courier --version, no bus', [COURIER, '--version'], no_bus)
        # --no-probe: what the D-Bus facts cost alone; the last row adds the portal probe
        # (decision 2607: one GET to the base URL, libcurl loaded).
        starts('  courier status --no-probe, bus with NetworkManager',
               [COURIER, 'status', '--no-probe'], with_bus)
        starts('  courier status --no-probe, no bus', [COURIER, 'status', '--no-probe'], no_bus)
        starts('  courier status --no-probe, path_facts none',
               [COURIER, 'status', '--no-probe'], off)
        starts('  courier status (probing), bus with NetworkManager', [COURIER, 'status'],
               with_bus)
    finally:
        mock.close()


main()
