"""A TCP proxy for the tests, in a thread of the test process: it listens on
127.0.0.1 and forwards each connection to a Unix socket (the throwaway
server's), so that taskd reaches the server over TCP as it would another host.
stop_forwarding() leaves every connection open but carries nothing more, as a
network that drops packets (or a stopped proxy) does: the kernel still
accepts what taskd sends, and no answer comes."""

import selectors
import socket
import threading


class TcpProxy:
    def __init__(self, unix_path):
        self.unix_path = unix_path
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        self.forwarding = threading.Event()
        self.forwarding.set()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            server = socket.socket(socket.AF_UNIX)
            try:
                server.connect(self.unix_path)
            except OSError:  # the server is down: refused, as a host that is down refuses
                server.close()
                client.close()
                continue
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    def _pump(self, a, b):
        with selectors.DefaultSelector() as selector:
            selector.register(a, selectors.EVENT_READ, b)
            selector.register(b, selectors.EVENT_READ, a)
            while True:
                self.forwarding.wait()
                for key, _ in selector.select(timeout=0.05):
                    if not self.forwarding.is_set():
                        break
                    try:
                        data = key.fileobj.recv(65536)
                        if data:
                            key.data.sendall(data)
                    except OSError:  # reset or closed by either side
                        data = b""
                    if not data:
                        a.close()
                        b.close()
                        return

    def stop_forwarding(self):
        self.forwarding.clear()

    def resume_forwarding(self):
        self.forwarding.set()

    def close(self):
        self.listener.close()
