/** Kept equal to package.json's version (a test checks it); sent in the user-agent. */
export const SDK_VERSION = '1.0.0'
