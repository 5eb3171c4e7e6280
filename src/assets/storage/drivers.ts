// The drivers this process can use, by name: fs always, s3 when configured. Rows name their driver
// (storage_provider), so each is looked up per row, never assumed.
import path from 'node:path';
import type { Config, StorageDriverName } from '../../config.js';
import type { Db } from '../../db/connect.js';
import { AppError, ErrorCode } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { StorageDriver } from './driver.js';
import { FsDriver } from './fs-driver.js';
import { S3Driver } from './s3-driver.js';
import { UrlSigner } from './url-signer.js';

export class StorageDrivers {
  constructor(
    private readonly drivers: Partial<Record<StorageDriverName, StorageDriver>>,
    /** Driver given to buckets that do not name one. */
    readonly defaultDriver: StorageDriverName,
    readonly signer: UrlSigner,
  ) {}

  static async create(config: Config, db: Db, log?: Logger): Promise<StorageDrivers> {
    const signer = await UrlSigner.load(db);
    const drivers: Partial<Record<StorageDriverName, StorageDriver>> = {
      fs: new FsDriver(path.resolve(config.dataDir, 'assets'), signer),
    };
    if (config.storage.s3) drivers.s3 = new S3Driver(config.storage.s3, log);
    return new StorageDrivers(drivers, config.storage.defaultDriver, signer);
  }

  available(name: string): name is StorageDriverName {
    return Boolean(this.drivers[name as StorageDriverName]);
  }

  get(name: string): StorageDriver {
    const driver = this.drivers[name as StorageDriverName];
    if (!driver) {
      throw new AppError(
        ErrorCode.internal,
        `Storage driver "${name}" is not configured on this service (set S3_BUCKET and friends for s3)`,
      );
    }
    return driver;
  }

  stop(): void {
    for (const driver of Object.values(this.drivers)) if (driver instanceof S3Driver) driver.stop();
  }
}
