"""A TCP proxy for the tests, in a thread of the test process: it listens on
127.0.0.1 and forwards each connection to a Unix socket (the throwaway
server's), so that taskd reaches the server over TCP as it would another host."""

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
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            server = socket.socket(socket.AF_UNIX)
            server.connect(self.unix_path)
            threading.Thread(target=self._pump, args=(client, server), daemon=True).start()

    @staticmethod
    def _pump(a, b):
        with selectors.DefaultSelector() as selector:
            selector.register(a, selectors.EVENT_READ, b)
            selector.register(b, selectors.EVENT_READ, a)
            while True:
                for key, _ in selector.select():
                    data = key.fileobj.recv(65536)
                    if not data:
                        a.close()
                        b.close()
                        return
                    key.data.sendall(data)

    def close(self):
        self.listener.close()
