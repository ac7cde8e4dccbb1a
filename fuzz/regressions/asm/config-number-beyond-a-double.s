.config {"LOG_BATCH": 1e400}
FINISH
