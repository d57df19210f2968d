#!/usr/bin/python3
"""A private D-Bus with python-dbusmock's NetworkManager template, for Courier's path-facts tests
and Benchmarks/pathfacts.

Run as a program it starts the bus and the mock, prints `address ADDRESS`, then reads one command
per line on stdin and answers `ok` (or `error WHY`) after the change is on the bus:

    metered N            Manager.Metered = N (NMMetered: 0 unknown, 1 yes, 2 no, 3 guess-yes, 4 guess-no)
    connectivity N       Manager.Connectivity = N (0 unknown, 1 none, 2 portal, 3 limited, 4 full)
    primary ID TYPE IF   a device IF and an active connection ID of TYPE, made primary
    primary none         PrimaryConnection = "/"
    dhcp4 KEY VALUE      the primary connection's Dhcp4Config gets Options {KEY: VALUE} (e.g.
                         default_url https://portal.example/api: a DHCPv4 lease's option 114)
    dhcp4 none           the primary connection's Dhcp4Config = "/" (no lease)
    kill                 the mock leaves the bus (NetworkManager stopped)
    start                the mock comes back (NetworkManager restarted), facts reset
    networkd ONLINE OP   a systemd-networkd mock (started on first use) with these states
    killbus              the bus itself goes away (and the mock with it)
    startbus             the bus comes back at the same address, the mock on it
    quit                 everything stops

Courier is pointed at it with DBUS_SYSTEM_BUS_ADDRESS=ADDRESS. Needs Debian's python3-dbusmock
and dbus (scripts/setup), run with /usr/bin/python3 (they are not in a venv).
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import dbus

NM = 'org.freedesktop.NetworkManager'
NM_PATH = '/org/freedesktop/NetworkManager'
MOCK = 'org.freedesktop.DBus.Mock'


class PrivateNetworkManager:
    """The bus, the mock on it, and the changes a test makes."""

    def __init__(self):
        # A fixed socket path, so the bus can come back at the same address.
        self.folder = tempfile.mkdtemp(prefix='courier-nm-')
        self.address = f'unix:path={self.folder}/bus'
        self.bus_process = None
        self.mock = None
        self.networkd = None
        self.start_bus()

    def start_bus(self):
        self.bus_process = subprocess.Popen(
            ['dbus-daemon', '--session', '--nofork', '--print-address=1',
             f'--address={self.address}'],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.bus_process.stdout.readline()  # printed once it listens
        self.connection = dbus.bus.BusConnection(self.address)
        self.start()

    def kill_bus(self):
        self.kill()
        self.connection.close()
        self.bus_process.kill()
        self.bus_process.wait(20)
        if os.path.exists(f'{self.folder}/bus'):
            os.unlink(f'{self.folder}/bus')

    def start(self):
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        self.mock = subprocess.Popen(
            ['/usr/bin/python3', '-m', 'dbusmock', '--template', 'networkmanager'],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not self.connection.name_has_owner(NM):
            if self.mock.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError('the NetworkManager mock did not start')
            time.sleep(0.01)  # a poll with a deadline on the name's owner
        manager = self.connection.get_object(NM, NM_PATH)
        add = manager.get_dbus_method('AddProperty', MOCK)
        add(NM, 'Metered', dbus.UInt32(0))
        add(NM, 'PrimaryConnection', dbus.ObjectPath('/'))
        self.primaries = set()
        self.dhcp4_configs = set()
        self.active = None

    def manager(self):
        return self.connection.get_object(NM, NM_PATH)

    def set(self, name, value):
        self.manager().get_dbus_method('SetProperty', MOCK)(NM_PATH, NM, name, value)

    def metered(self, value):
        self.set('Metered', dbus.UInt32(value, variant_level=1))

    def connectivity(self, value):
        self.set('Connectivity', dbus.UInt32(value, variant_level=1))

    def primary(self, conn_id, conn_type, interface):
        active = f'{NM_PATH}/ActiveConnection/{interface}'
        device = f'{NM_PATH}/Devices/{interface}'
        if interface not in self.primaries:
            add_object = self.manager().get_dbus_method('AddObject', MOCK)
            add_object(device, f'{NM}.Device', {'Interface': interface}, [])
            add_object(active, f'{NM}.Connection.Active', {
                'Id': conn_id, 'Type': conn_type,
                'Devices': dbus.Array([dbus.ObjectPath(device)], signature='o'),
                'Dhcp4Config': dbus.ObjectPath('/')}, [])
            self.primaries.add(interface)
        self.active = active
        self.set('PrimaryConnection', dbus.ObjectPath(active, variant_level=1))

    def dhcp4(self, key, value):
        """The primary connection's DHCPv4 lease: one option, or none at all (key 'none')."""
        if key == 'none':
            self.manager().get_dbus_method('SetProperty', MOCK)(
                self.active, f'{NM}.Connection.Active', 'Dhcp4Config',
                dbus.ObjectPath('/', variant_level=1))
            return
        config = self.active.replace('/ActiveConnection/', '/DHCP4Config/')
        options = dbus.Dictionary({key: dbus.String(value, variant_level=1)}, signature='sv')
        if config not in self.dhcp4_configs:
            self.manager().get_dbus_method('AddObject', MOCK)(
                config, f'{NM}.DHCP4Config', {'Options': options}, [])
            self.dhcp4_configs.add(config)
        else:
            self.manager().get_dbus_method('SetProperty', MOCK)(
                config, f'{NM}.DHCP4Config', 'Options', dbus.Dictionary(
                    options, signature='sv', variant_level=1))
        self.manager().get_dbus_method('SetProperty', MOCK)(
            self.active, f'{NM}.Connection.Active', 'Dhcp4Config',
            dbus.ObjectPath(config, variant_level=1))

    def no_primary(self):
        self.set('PrimaryConnection', dbus.ObjectPath('/', variant_level=1))

    def set_networkd(self, online, operational):
        name, path = 'org.freedesktop.network1', '/org/freedesktop/network1'
        manager = f'{name}.Manager'
        if self.networkd is None:
            env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
            self.networkd = subprocess.Popen(
                ['/usr/bin/python3', '-m', 'dbusmock', '--system', name, path, manager],
                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 20
            while not self.connection.name_has_owner(name):
                if self.networkd.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError('the networkd mock did not start')
                time.sleep(0.01)  # a poll with a deadline on the name's owner
            add = self.connection.get_object(name, path).get_dbus_method('AddProperty', MOCK)
            add(manager, 'OnlineState', online)
            add(manager, 'OperationalState', operational)
            return
        props = self.connection.get_object(name, path).get_dbus_method(
            'Set', 'org.freedesktop.DBus.Properties')
        props(manager, 'OnlineState', dbus.String(online, variant_level=1))
        props(manager, 'OperationalState', dbus.String(operational, variant_level=1))

    def kill(self):
        # SIGKILL: the mock's main loop does not end on SIGTERM, and a crashed service is what
        # Courier must survive anyway.
        self.mock.send_signal(signal.SIGKILL)
        self.mock.wait(20)
        deadline = time.monotonic() + 20
        while self.connection.name_has_owner(NM) and time.monotonic() < deadline:
            time.sleep(0.01)  # a poll with a deadline on the name's owner

    def close(self):
        for process in (self.mock, self.networkd, self.bus_process):
            if process and process.poll() is None:
                process.kill()
                process.wait(20)
        shutil.rmtree(self.folder, ignore_errors=True)


def main():
    mock = PrivateNetworkManager()
    print('address', mock.address, flush=True)
    try:
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            try:
                if words[0] == 'metered':
                    mock.metered(int(words[1]))
                elif words[0] == 'connectivity':
                    mock.connectivity(int(words[1]))
                elif words[0] == 'primary' and words[1:] == ['none']:
                    mock.no_primary()
                elif words[0] == 'primary':
                    mock.primary(words[1], words[2], words[3])
                elif words[0] == 'dhcp4':
                    mock.dhcp4(words[1], words[2] if len(words) > 2 else '')
                elif words[0] == 'kill':
                    mock.kill()
                elif words[0] == 'start':
                    mock.start()
                elif words[0] == 'networkd':
                    mock.set_networkd(words[1], words[2])
                elif words[0] == 'killbus':
                    mock.kill_bus()
                elif words[0] == 'startbus':
                    mock.start_bus()
                elif words[0] == 'quit':
                    print('ok', flush=True)
                    break
                else:
                    raise ValueError(f'unknown command {words[0]}')
                print('ok', flush=True)
            except Exception as error:  # pylint: disable=broad-except
                print('error', str(error).replace('\n', ' '), flush=True)
    finally:
        mock.close()


if __name__ == '__main__':
    main()
