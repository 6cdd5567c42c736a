"""A server and its load client that hang together, for the job-triage tests
(tests/integration/test_jobs.py): an HTTP server whose request handler waits for a lock that its
"refresher" thread took and never gives back, and a client process waiting for the answer. Two
processes, one of each: no vote can tell which is to blame; the client's connection leads to the
server.

    python3 job_server_client.py READY_DIR

The server writes READY_DIR/server-PID.ready (its port) once it listens; the client, started by
the launcher after it, writes READY_DIR/client-PID.ready just before its request (the line marked
CLIENT-WAITS); the server's handler writes READY_DIR/handler-PID.ready (the line marked
HANDLER-WAITS, its thread's name) just before it blocks. Python 3.7 on."""
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request


def write_truth(ready_dir, name, truth):
    path = os.path.join(ready_dir, "%s-%d.ready" % (name, os.getpid()))
    with open(path + ".tmp", "w") as out:
        json.dump(truth, out)
    os.rename(path + ".tmp", path)


prices_lock = threading.Lock()


def refresher():
    prices_lock.acquire()  # and never released: the refresh it guards never ends
    while True:
        time.sleep(3600)


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        write_truth(READY_DIR, "handler", {"thread": threading.current_thread().name})
        with prices_lock:  # HANDLER-WAITS
            body = b"prices"
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)


def server(ready_dir):
    global READY_DIR
    READY_DIR = ready_dir
    threading.Thread(target=refresher, name="refresher", daemon=True).start()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    write_truth(ready_dir, "server", {"port": httpd.server_address[1]})
    httpd.serve_forever()


def client(ready_dir, port):
    write_truth(ready_dir, "client", {"port": port})
    urllib.request.urlopen("http://127.0.0.1:%d/prices" % port).read()  # CLIENT-WAITS


def launcher(ready_dir):
    here = os.path.abspath(__file__)
    serving = subprocess.Popen([sys.executable, here, "--server", ready_dir])
    while True:
        found = [name for name in os.listdir(ready_dir) if name.startswith("server-") and name.endswith(".ready")]
        if found:
            break
        time.sleep(0.05)
    with open(os.path.join(ready_dir, found[0])) as stream:
        port = json.load(stream)["port"]
    loading = subprocess.Popen([sys.executable, here, "--client", ready_dir, str(port)])
    loading.wait()
    serving.wait()


if __name__ == "__main__":
    if sys.argv[1] == "--server":
        server(sys.argv[2])
    elif sys.argv[1] == "--client":
        client(sys.argv[2], int(sys.argv[3]))
    else:
        launcher(sys.argv[1])
