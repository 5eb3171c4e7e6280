// Asset-specific members of the one error taxonomy (codes and statuses come from src/errors.ts).
import { AppError, ErrorCode } from '../errors.js';
import { UPGRADE_URL } from '../tiers.js';

export const assetErrors = {
  quotaExceeded: (details: { tier: string; quotaBytes: number; usedBytes: number; uploadBytes?: number }) =>
    new AppError(
      ErrorCode.quotaExceeded,
      `This upload would take the project past its storage quota of ${details.quotaBytes} bytes (tier "${details.tier}", ${details.usedBytes} bytes used)`,
      { ...details, upgradeUrl: UPGRADE_URL },
      { body: { upgradeUrl: UPGRADE_URL } },
    ),
  tooLarge: (limitBytes: number, what: string) =>
    new AppError(ErrorCode.payloadTooLarge, `The file is larger than ${what} of ${limitBytes} bytes`, { limitBytes }),
  unsupportedType: (contentType: string, allowed: string[], bucket: string) =>
    new AppError(ErrorCode.unsupportedMediaType, `Bucket "${bucket}" does not take files of type ${contentType}`, {
      contentType,
      allowedContentTypes: allowed,
    }),
  systemBucket: (name: string, action: string) =>
    new AppError(ErrorCode.forbidden, `"${name}" is a system bucket: ${action}`, { bucket: name }),
  badSignature: (reason: 'expired' | 'invalid') =>
    new AppError(
      ErrorCode.forbidden,
      reason === 'expired'
        ? 'This download link has expired; ask GET /api/v1/assets/items/:id/download for a new one'
        : 'This download link is not valid (its signature does not match)',
      { reason },
    ),
};
