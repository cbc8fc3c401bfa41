-- Whether a host admits new work only through the gateway (the default). A host whose runtime can
-- start work behind the gateway's back (an OpenCode server also driven by other clients, through the
-- bridge) declares false: a seal then terminates everything it knows of, but cannot prove that
-- nothing new starts, and answers SealUnsupportedError(ADMISSION_NOT_EXCLUSIVE) instead of SessionSealed.
ALTER TABLE hosts ADD COLUMN exclusive_admission boolean NOT NULL DEFAULT true;
