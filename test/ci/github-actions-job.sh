#!/usr/bin/env bash
# The steps of a GitHub Actions job that gates a build on a plan, as a plain shell script (the test
# runs it as CI would: CI=true, no terminal). docs/ci.md shows the same job as workflow YAML.
#   env: OTP_SERVER_URL, OTP_KEY, PLAN, OUT (a directory), APP_PASSWORD (a secret)
set -u
status=0
node bin/otp.mjs run --plan "$PLAN" --secret APP_PASSWORD --junit "$OUT/junit.xml" --ctrf "$OUT/ctrf.json" || status=$?
# A later step of the job would publish $OUT/junit.xml; the job's result is the command's.
echo "otp run exited $status"
exit "$status"
