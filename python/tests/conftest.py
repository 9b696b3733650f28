"""A fresh sandbox per test: `root/` (the working directory and only root) holding a few files
and the secrets the default excludes hide, and `outside/` beside it with a canary."""

import os

import pytest

CANARY = "CANARY-OUTSIDE-7f3a9c"
ENV_CANARY = "CANARY-DOTENV-51c2e8"


class Sandbox:
    def __init__(self, base):
        self.base = str(base)
        self.root = os.path.join(self.base, "root")
        self.outside = os.path.join(self.base, "outside")
        os.makedirs(self.root)
        os.makedirs(self.outside)
        self.write("outside/secret.txt", CANARY + "\n")
        self.write("root/.env", f"TOKEN={ENV_CANARY}\n")

    def write(self, rel, data):
        path = os.path.join(self.base, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)
        return path

    def file(self, rel, data):
        """A file beneath root/."""
        return self.write(os.path.join("root", rel), data)


@pytest.fixture
def sb(tmp_path):
    return Sandbox(os.path.realpath(tmp_path))


def no_secret(value):
    """True when neither canary appears anywhere in VALUE's text."""
    text = repr(value)
    return CANARY not in text and ENV_CANARY not in text
