# Runs a command under a real pseudo-terminal and prints {"output", "code"} as JSON.
# argv[1]: JSON {"argv": [...], "env": {...}, "columns": n,
#                "interrupt_after": text or null (SIGINT once the output shows it),
#                "answer_after": [text, reply] or null (types reply once the output shows text)}
import json, os, pty, select, signal, struct, sys, fcntl, termios, time

config = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(config.get("env", {}))
    os.execvp(config["argv"][0], config["argv"])

fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, config.get("columns", 160), 0, 0))
output = b""
interrupt = config.get("interrupt_after")
answer = config.get("answer_after")
deadline = time.monotonic() + config.get("timeout_s", 60)
while time.monotonic() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    text = output.decode("utf-8", "replace")
    if interrupt and interrupt in text:
        os.kill(pid, signal.SIGINT)
        interrupt = None
    if answer and answer[0] in text:
        os.write(fd, answer[1].encode())
        answer = None
else:
    os.kill(pid, signal.SIGKILL)

_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
print(json.dumps({"output": output.decode("utf-8", "replace"), "code": code}))
