#!/usr/bin/env bash
#===- test/Utils/mpirun-in-own-session.sh - One mpirun, its own session dir -===#
#
# Usage: mpirun-in-own-session.sh MPIRUN [ARGS...]
#
# Runs the given mpirun command with an Open MPI session directory of its
# own, removed afterwards, and returns its exit status.
#
# Why: every job of one user on one host keeps its session files under the
# same top directory ($TMPDIR/ompi.HOST.UID), and the last job to finish
# removes it. Tests start MPI jobs in parallel (lit and ctest both run
# several at once), so one job could be creating its session directory just
# as another removed the parent, and mpirun failed with "orte_session_dir
# failed" before starting any rank. Private directories cannot race.
#
# It also tells Open MPI 4 (orte) not to fail the job when a rank exits with
# status 0 before mpirun has seen its finalize: MPI_Finalize waits at most
# 2 s for mpirun's acknowledgement (PMIx_Finalize's timeout), then exits
# anyway, and a loaded machine (the tests' parallel MPI jobs on few cores)
# can hold mpirun up that long; mpirun then reported "process rank N ...
# exiting improperly" for a job whose every rank had finished (a CI run
# failed so). A rank that exits non-zero, aborts or dies by a signal still
# fails the job; Loom's runtime never exits 0 without finalizing.
#
#===----------------------------------------------------------------------===#
set -uo pipefail

session=$(mktemp -d "${TMPDIR:-/tmp}/loom-mpi.XXXXXX") || exit 1
trap 'rm -rf "$session"' EXIT
# Open MPI 4 (orte) and 5 (prte) read their session base from these.
export OMPI_MCA_orte_tmpdir_base=$session PRTE_MCA_prte_tmpdir_base=$session
: "${OMPI_MCA_orte_allowed_exit_without_sync:=1}"
export OMPI_MCA_orte_allowed_exit_without_sync
"$@"
