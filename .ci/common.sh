# What the CI scripts share; sourced by .ci/run and .ci/pythons from the checkout's root.

# Print the README's test command: the second line of its first fenced block, so that CI and the
# README can never drift apart.
readme_test_command() {
    awk '/^```/{n++; next} n==1{print}' README.md | sed -n 2p
}

# Run the test command "$1" with bash; a run that collected no tests fails too (pytest's 5).
run_test_command() {
    local rc=0
    echo "+ $1"
    bash -c "$1" || rc=$?
    if [ "$rc" -eq 5 ]; then
        echo "pytest collected no tests" >&2
        return 1
    fi
    return "$rc"
}
