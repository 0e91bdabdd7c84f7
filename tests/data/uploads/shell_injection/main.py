"""Compress the input bundle into the output folder."""
import os

from dagsmith_kit import run_service


def archive(inp, out, params):
    name = params.get("archive_name", "bundle")
    os.system("tar czf " + str(out.path) + "/" + name + ".tgz " + str(inp.path))


if __name__ == "__main__":
    run_service(archive)
