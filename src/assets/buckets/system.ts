// The buckets every project has. They are created on first use in a project (projects can be made
// by any code, so nothing waits for a "project created" moment), and cannot be deleted.
export const PROFILE_BUCKET = 'profil';
export const EVIDENCE_BUCKET = 'otp-evidence';
export const DELETION_BUCKET = '_deletion';

export interface SystemBucketSpec {
  name: string;
  maxFileBytes: number | null;
  allowedContentTypes: string[] | null;
  /** Whether clients may upload into it through POST /assets/buckets/:id/assets. */
  directUploads: boolean;
  why: string;
}

export const SYSTEM_BUCKETS: readonly SystemBucketSpec[] = [
  {
    name: PROFILE_BUCKET,
    maxFileBytes: 10 * 1024 * 1024,
    allowedContentTypes: ['image/png', 'image/jpeg', 'image/gif', 'image/webp'],
    directUploads: true,
    why: 'profile photos',
  },
  {
    name: EVIDENCE_BUCKET,
    maxFileBytes: null,
    allowedContentTypes: null,
    directUploads: false,
    why: 'OTP evidence; upload through POST /api/v1/otp/evidence so it is linked to its run',
  },
  {
    name: DELETION_BUCKET,
    maxFileBytes: null,
    allowedContentTypes: null,
    directUploads: false,
    why: 'archive of deleted assets; only the service writes it',
  },
];

export function systemBucket(name: string): SystemBucketSpec | undefined {
  return SYSTEM_BUCKETS.find((b) => b.name === name);
}
