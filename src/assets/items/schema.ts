// Schemas of the asset resource. Upload forms are multipart: their text fields are described (and
// checked) by the form schemas; the file travels in the part named "file".
export const visibility = {
  enum: ['private', 'public'],
  description: 'public: anyone may read it at /api/v1/assets/public/:id without a key; private (default): only through signed links',
};

export const assetUploadFormSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    file: { type: 'string', format: 'binary', description: 'The file (multipart part named "file")' },
    visibility,
  },
  required: ['file'],
};

export const assetPatchSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['visibility'],
  properties: { visibility },
};
