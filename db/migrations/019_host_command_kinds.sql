-- Migrations 012 (session mutations routed to a host) and 013 (admissions) were written side by side and
-- each replaced host_commands_kind_check with its own list: the one applied last dropped the other's kinds.
-- The check names every kind the gateway issues (domain/commands.ts CommandKind).
ALTER TABLE host_commands
  DROP CONSTRAINT host_commands_kind_check,
  ADD CONSTRAINT host_commands_kind_check
    CHECK (kind IN ('CANCEL_JOB', 'INTERRUPT_EXECUTION', 'COMPACT_SESSION', 'GENERATE',
      'CREATE_SESSION', 'RENAME_SESSION', 'REMOVE_SESSION', 'CLOSE_ADMISSIONS'));
