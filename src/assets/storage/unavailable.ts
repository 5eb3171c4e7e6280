// The object store's side of the outage classification (the logic lives in the kernel's
// src/unavailable.ts, where the one error normaliser can use it). The drivers run every call of
// theirs through guardStorage, so a socket error from S3 leaves tagged as the store's.
export { guardStorage, isStorageUnavailable, isStoreFailure, StorageUnavailableError } from '../../unavailable.js';
