import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';

describe('Config: storage', () => {
  it('defaults to the fs driver, 1 GiB uploads and 15-minute links', () => {
    const { storage } = loadConfig({});
    expect(storage).to.deep.equal({
      defaultDriver: 'fs',
      s3: undefined,
      maxUploadBytes: 1024 ** 3,
      signedUrlTtlSec: 900,
      publicUrl: undefined,
    });
  });

  it('switches new buckets to s3 when S3_BUCKET is set, with path-style addresses for a custom endpoint', () => {
    const { storage } = loadConfig({
      S3_ENDPOINT: 'http://minio:9000/',
      S3_BUCKET: 'assets',
      S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 'secret',
      MAX_UPLOAD_BYTES: '1048576',
      PUBLIC_URL: 'https://otp.example.com/',
    });
    expect(storage.defaultDriver).to.equal('s3');
    expect(storage.s3).to.deep.equal({
      endpoint: 'http://minio:9000',
      publicEndpoint: undefined,
      region: 'us-east-1',
      bucket: 'assets',
      accessKeyId: 'id',
      secretAccessKey: 'secret',
      forcePathStyle: true,
    });
    expect(storage.maxUploadBytes).to.equal(1048576);
    expect(storage.publicUrl).to.equal('https://otp.example.com');
  });

  it('keeps fs as the default when asked, with s3 still available', () => {
    const { storage } = loadConfig({ S3_BUCKET: 'assets', STORAGE_DRIVER: 'fs', S3_FORCE_PATH_STYLE: 'false' });
    expect(storage.defaultDriver).to.equal('fs');
    expect(storage.s3).to.include({ bucket: 'assets', forcePathStyle: false });
  });

  it('refuses settings that cannot work, saying which', () => {
    expect(() => loadConfig({ STORAGE_DRIVER: 's3' })).to.throw(/S3_BUCKET/);
    expect(() => loadConfig({ STORAGE_DRIVER: 'ftp' })).to.throw(/STORAGE_DRIVER/);
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_ACCESS_KEY_ID: 'only-id' })).to.throw(/S3_SECRET_ACCESS_KEY/);
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_ENDPOINT: 'minio:9000' })).to.throw(/S3_ENDPOINT/);
    expect(() => loadConfig({ MAX_UPLOAD_BYTES: '0' })).to.throw(/MAX_UPLOAD_BYTES/);
    expect(() => loadConfig({ S3_BUCKET: 'b', S3_FORCE_PATH_STYLE: 'maybe' })).to.throw(/S3_FORCE_PATH_STYLE/);
  });
});
