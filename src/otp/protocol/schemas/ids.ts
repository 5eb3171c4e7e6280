// Patterns of the protocol's ids and version, shared by the frame and payload schemas.

export const ID_PATTERNS = {
  message: '^msg_[A-Za-z0-9_-]{1,64}$',
  session: '^ots_[A-Za-z0-9_-]{1,64}$',
  run: '^otr_[A-Za-z0-9_-]{1,64}$',
  asset: '^ast_[A-Za-z0-9_-]{1,64}$',
  project: '^prj_[A-Za-z0-9_-]{1,64}$',
} as const;

export const OTP_VERSION_PATTERN = '^\\d+\\.\\d+$';
