# Sourced by start.sh and test.sh: make .venv hold radixviz (and its test tools with
# `install_radixviz dev`), saying what each stage does. Nothing is reinstalled when
# pyproject.toml, the Python and the torch choice are what they were at the last install.
#
# torch, the one large dependency:
#   - already in .venv: kept, whatever build it is;
#   - RADIXVIZ_TORCH_INDEX=URL: installed from that package index (PyTorch publishes one
#     per build, CPU or a CUDA version; https://pytorch.org/get-started/locally/ gives the
#     address for your machine);
#   - RADIXVIZ_KEEP_TORCH=1: a new .venv sees the torch your python3 already has
#     (a virtualenv with --system-site-packages) instead of installing one;
#   - otherwise: torch $TORCH_VERSION from the default index. On Linux x86-64 PyPI's wheel
#     is the CUDA build, several GB to download; the CPU build is far smaller (see above).

TORCH_VERSION=2.13.0
PIP=(.venv/bin/python -m pip --disable-pip-version-check)

stage() {   # a line per stage, in bold on a terminal
  if [ -t 1 ]; then printf '\033[1mradixviz set-up:\033[0m %s\n' "$*"; else printf 'radixviz set-up: %s\n' "$*"; fi
}

# one line naming the torch in .venv and its build, or nothing when there is none
torch_in_venv() {
  .venv/bin/python - <<'EOF' 2>/dev/null
import importlib.util
if importlib.util.find_spec("torch") is not None:
    import torch
    build = f"CUDA {torch.version.cuda}" if torch.version.cuda else "CPU only"
    print(f"torch {torch.__version__} ({build}) from {torch.__file__.rsplit('/torch/', 1)[0]}")
EOF
}

install_stamp() {   # what an install depends on; a change means installing again
  { cat pyproject.toml; echo "extras=$1 torch_index=${RADIXVIZ_TORCH_INDEX:-}";
    .venv/bin/python -c 'import sys; print(sys.version, sys.prefix)'; pwd; } | sha256sum | cut -c1-16
}

install_radixviz() {   # $1: "app" or "dev" (the test tools too)
  local extras=$1 started=$SECONDS stamp_file=.venv/.radixviz-installed-$1
  if [ -x .venv/bin/python ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$(install_stamp "$extras")" ]; then
    return 0   # nothing changed since the last install: start at once
  fi
  if [ ! -x .venv/bin/python ]; then
    local python=${PYTHON:-python3} venv_flags=()
    "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null || {
      echo "radixviz needs Python 3.10 or newer (tried $python; set PYTHON=/path/to/python3)" >&2; exit 2; }
    if [ -n "${RADIXVIZ_KEEP_TORCH:-}" ]; then
      "$python" -c 'import torch' 2>/dev/null || {
        echo "RADIXVIZ_KEEP_TORCH is set but $python has no torch to keep" >&2; exit 2; }
      venv_flags=(--system-site-packages)
    fi
    stage "1/3 creating .venv with $("$python" -V 2>&1)${venv_flags[*]:+ (${venv_flags[*]})}"
    "$python" -m venv "${venv_flags[@]}" .venv
  else
    stage "1/3 .venv exists ($(.venv/bin/python -V 2>&1))"
  fi

  local have
  have=$(torch_in_venv)
  if [ -n "$have" ] && [ -z "${RADIXVIZ_TORCH_INDEX:-}" ]; then
    stage "2/3 keeping $have"
  else
    if [ -n "${RADIXVIZ_TORCH_INDEX:-}" ]; then
      stage "2/3 installing torch from $RADIXVIZ_TORCH_INDEX"
      "${PIP[@]}" install "torch>=2.1,<3" numpy --index-url "$RADIXVIZ_TORCH_INDEX"
    else
      stage "2/3 installing torch $TORCH_VERSION from the default index (on Linux x86-64 PyPI's"
      stage "    wheel is the CUDA build, several GB; for the CPU build see RADIXVIZ_TORCH_INDEX in docs/getting-started.md)"
      "${PIP[@]}" install "torch==$TORCH_VERSION" numpy
    fi
    stage "    installed: $(torch_in_venv)"
  fi

  local target=. what=""
  # dev: the test tools and the documentation site's builder (the tests build the site)
  [ "$extras" = dev ] && target='.[dev,docs]' what=" with its test and documentation tools"
  stage "3/3 installing radixviz$what and its dependencies (pip install -e '$target')"
  "${PIP[@]}" install -e "$target"
  install_stamp "$extras" > "$stamp_file"
  [ "$extras" = dev ] && install_stamp app > .venv/.radixviz-installed-app   # dev holds the app
  stage "done in $((SECONDS - started)) s; the next start skips this until pyproject.toml changes"
}
